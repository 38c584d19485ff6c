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
 * locklab itself and compares the two cycle rates.
 *
 *   usage: locklab-bare-pg CONNINFO SECONDS   (CONNINFO: "host=... port=...")
 *   prints: cycles=N elapsed_ns=E
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Run one statement; 0 when it succeeded. */
static int ok(PGresult *r, const char *what)
{
    ExecStatusType st = PQresultStatus(r);
    if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
        return 0;
    fprintf(stderr, "bare loop: %s: %s", what, PQresultErrorMessage(r));
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CONNINFO SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    PGconn *pc = PQconnectdb(argv[1]);
    if (PQstatus(pc) != CONNECTION_OK) {
        fprintf(stderr, "bare loop: %s", PQerrorMessage(pc));
        PQfinish(pc);
        return 3;
    }
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)"locklab-bare"; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    char id[24];
    snprintf(id, sizeof id, "%lld", (long long)(int64_t)h);
    const char *params[] = {id};
    PGresult *r = PQexec(pc, "SET lock_timeout = 30000");
    int bad = ok(r, "SET");
    PQclear(r);
    r = PQprepare(pc, "lock", "SELECT pg_advisory_lock($1::bigint)", 1, NULL);
    bad = bad || ok(r, "prepare");
    PQclear(r);
    r = PQprepare(pc, "unlock", "SELECT pg_advisory_unlock($1::bigint)", 1, NULL);
    bad = bad || ok(r, "prepare");
    PQclear(r);
    if (bad) {
        PQfinish(pc);
        return 3;
    }

    long long cycles = 0, start = now_ns(), end = start + (long long)(seconds * 1e9), t = start;
    int status = 0;
    while (t < end) {
        r = PQexecPrepared(pc, "lock", 1, params, NULL, NULL, 0);
        if (ok(r, "pg_advisory_lock") != 0) {
            PQclear(r);
            status = 1;
            break;
        }
        PQclear(r);
        r = PQexecPrepared(pc, "unlock", 1, params, NULL, NULL, 0);
        if (ok(r, "pg_advisory_unlock") != 0 || strcmp(PQgetvalue(r, 0, 0), "t") != 0) {
            fprintf(stderr, "bare loop: the unlock did not find the lock held\n");
            PQclear(r);
            status = 1;
            break;
        }
        PQclear(r);
        cycles++;
        t = now_ns();
    }
    if (status == 0)
        printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    PQfinish(pc);
    return status;
}
