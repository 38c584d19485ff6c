/*
 * bare_pg_loop.c - the yardstick for locklab's overhead on PostgreSQL.
 *
 * The smallest honest program doing what an uncontended `pg-advisory`
 * acquire and release do per cycle: one libpq session, lock_timeout set
 * once, then SELECT pg_advisory_lock($1) and SELECT pg_advisory_unlock($1)
 * as prepared statements, checking that the unlock found the lock held,
 * for a fixed time. The key is a bigint, hashed from a name with 64-bit
 * FNV-1a as pg-advisory does. It links nothing of locklab's harness.
 * `locklab bench overhead --backend postgres` runs it side by side with
 * locklab itself and compares the two cycle rates. With CONNECTIONS, that
 * many sessions at once, a thread and a key each (bare_threads.c): the
 * store's ceiling for `locklab bench ceiling --backend postgres`.
 *
 *   usage: locklab-bare-pg CONNINFO SECONDS [CONNECTIONS]  (CONNINFO: "host=... port=...")
 *   prints: cycles=N elapsed_ns=E
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "bare_threads.h"

/* Run one statement; 0 when it succeeded. */
static int ok(PGresult *r, const char *what)
{
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
        return 0;
    fprintf(stderr, "bare loop: %s: %s", what, PQresultErrorMessage(r));
    return -1;
}

/* One session, its key's id and its prepared statements. */
struct pg_bare {
    PGconn *pc;
    char id[24];
};

static void *pg_open(const char *conninfo, int index)
{
    struct pg_bare *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->pc = PQconnectdb(conninfo);
    if (PQstatus(b->pc) != CONNECTION_OK) {
        fprintf(stderr, "bare loop: %s", PQerrorMessage(b->pc));
        PQfinish(b->pc);
        free(b);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, index < 0 ? "locklab-bare" : "locklab-bare-%d", index);
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    snprintf(b->id, sizeof b->id, "%lld", (long long)(int64_t)h);
    PGresult *r = PQexec(b->pc, "SET lock_timeout = 30000");
    int bad = ok(r, "SET");
    PQclear(r);
    r = PQprepare(b->pc, "lock", "SELECT pg_advisory_lock($1::bigint)", 1, NULL);
    bad = bad || ok(r, "prepare");
    PQclear(r);
    r = PQprepare(b->pc, "unlock", "SELECT pg_advisory_unlock($1::bigint)", 1, NULL);
    bad = bad || ok(r, "prepare");
    PQclear(r);
    if (bad) {
        PQfinish(b->pc);
        free(b);
        return NULL;
    }
    return b;
}

static int pg_cycle(void *state)
{
    struct pg_bare *b = state;
    const char *params[] = {b->id};
    PGresult *r = PQexecPrepared(b->pc, "lock", 1, params, NULL, NULL, 0);
    int bad = ok(r, "pg_advisory_lock");
    PQclear(r);
    if (bad)
        return -1;
    r = PQexecPrepared(b->pc, "unlock", 1, params, NULL, NULL, 0);
    bad = ok(r, "pg_advisory_unlock") != 0 || strcmp(PQgetvalue(r, 0, 0), "t") != 0;
    if (bad)
        fprintf(stderr, "bare loop: the unlock did not find the lock held\n");
    PQclear(r);
    return bad ? -1 : 0;
}

static void pg_close(void *state)
{
    struct pg_bare *b = state;
    PQfinish(b->pc);
    free(b);
}

int main(int argc, char **argv)
{
    static const struct bare_loop loop = {pg_open, pg_cycle, pg_close};
    return bare_threads_main(argc, argv, &loop);
}
