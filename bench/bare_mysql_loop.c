/*
 * bare_mysql_loop.c - the yardstick for locklab's overhead on MariaDB.
 *
 * The smallest honest program doing what `mysql-get-lock` does per cycle
 * with one client: SELECT GET_LOCK(name, t), then SELECT RELEASE_LOCK(name),
 * each read whole, on one blocking Connector/C connection into the locklab
 * database, for a fixed time. It links nothing of locklab's harness.
 * `locklab bench overhead --backend mysql` runs it side by side with
 * locklab itself and prints the ratio of the two cycle rates. With
 * CONNECTIONS, that many connections at once, a thread and a lock name
 * each (bare_threads.c): the store's ceiling for `locklab bench ceiling
 * --backend mysql`.
 *
 *   usage: locklab-bare-mysql HOST:PORT SECONDS [CONNECTIONS]
 *   prints: cycles=N elapsed_ns=E
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bare_threads.h"

/* Run sql and return its one integer answer, or -1. */
static long long one_int(MYSQL *m, const char *sql)
{
    if (mysql_real_query(m, sql, strlen(sql)) != 0)
        return -1;
    MYSQL_RES *r = mysql_store_result(m);
    if (!r)
        return -1;
    MYSQL_ROW row = mysql_fetch_row(r);
    long long v = row && row[0] ? strtoll(row[0], NULL, 10) : -1;
    mysql_free_result(r);
    return v;
}

/* One connection and its two statements. */
struct my_bare {
    MYSQL *m;
    char get[96], rel[96];
};

static void *my_open(const char *conn, int index)
{
    char host[64];
    int port;
    if (sscanf(conn, "%63[^:]:%d", host, &port) != 2) {
        fprintf(stderr, "bare loop: '%s' is not HOST:PORT\n", conn);
        return NULL;
    }
    struct my_bare *b = calloc(1, sizeof *b);
    if (b)
        b->m = mysql_init(NULL);
    if (!b || !b->m ||
        !mysql_real_connect(b->m, host, "root", "", "locklab", (unsigned)port, NULL, 0)) {
        fprintf(stderr, "bare loop: cannot connect: %s\n", b && b->m ? mysql_error(b->m)
                                                                     : "out of memory");
        if (b && b->m)
            mysql_close(b->m);
        free(b);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, index < 0 ? "locklab/bare" : "locklab/bare-%d", index);
    snprintf(b->get, sizeof b->get, "SELECT GET_LOCK('%s', 1.000)", name);
    snprintf(b->rel, sizeof b->rel, "SELECT RELEASE_LOCK('%s')", name);
    return b;
}

static int my_cycle(void *state)
{
    struct my_bare *b = state;
    if (one_int(b->m, b->get) != 1) {
        fprintf(stderr, "bare loop: GET_LOCK was not granted: %s\n", mysql_error(b->m));
        return -1;
    }
    if (one_int(b->m, b->rel) != 1) {
        fprintf(stderr, "bare loop: RELEASE_LOCK did not release: %s\n", mysql_error(b->m));
        return -1;
    }
    return 0;
}

static void my_close(void *state)
{
    struct my_bare *b = state;
    mysql_close(b->m);
    free(b);
}

int main(int argc, char **argv)
{
    static const struct bare_loop loop = {my_open, my_cycle, my_close};
    return bare_threads_main(argc, argv, &loop);
}
