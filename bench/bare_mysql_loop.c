/*
 * bare_mysql_loop.c - the yardstick for locklab's overhead on MariaDB.
 *
 * The smallest honest program doing what `mysql-get-lock` does per cycle
 * with one client: SELECT GET_LOCK(name, t), then SELECT RELEASE_LOCK(name),
 * each read whole, on one blocking Connector/C connection into the locklab
 * database, for a fixed time. It links nothing of locklab's harness.
 * `locklab bench overhead --backend mysql` runs it side by side with
 * locklab itself and prints the ratio of the two cycle rates.
 *
 *   usage: locklab-bare-mysql HOST:PORT SECONDS
 *   prints: cycles=N elapsed_ns=E
 */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

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

int main(int argc, char **argv)
{
    char host[64];
    int port;
    if (argc != 3 || sscanf(argv[1], "%63[^:]:%d", host, &port) != 2) {
        fprintf(stderr, "usage: %s HOST:PORT SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    MYSQL *m = mysql_init(NULL);
    if (!m || !mysql_real_connect(m, host, "root", "", "locklab", (unsigned)port, NULL, 0)) {
        fprintf(stderr, "bare loop: cannot connect: %s\n", m ? mysql_error(m) : "out of memory");
        return 3;
    }
    const char *get = "SELECT GET_LOCK('locklab/bare', 1.000)";
    const char *rel = "SELECT RELEASE_LOCK('locklab/bare')";

    long long cycles = 0, start = now_ns(), end = start + (long long)(seconds * 1e9), t = start;
    while (t < end) {
        if (one_int(m, get) != 1) {
            fprintf(stderr, "bare loop: GET_LOCK was not granted: %s\n", mysql_error(m));
            return 1;
        }
        if (one_int(m, rel) != 1) {
            fprintf(stderr, "bare loop: RELEASE_LOCK did not release: %s\n", mysql_error(m));
            return 1;
        }
        cycles++;
        t = now_ns();
    }
    printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    mysql_close(m);
    return 0;
}
