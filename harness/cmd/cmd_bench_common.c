/*
 * cmd_bench_common.c - what the `locklab bench` commands share (bench.h): the option
 * parser every one of them reads its numbers with, and the counter-workload
 * scenario and run they measure locklab by. Its own file so that a command
 * in a file of its own (cmd_bench_ceiling.c) needs nothing of cmd_bench.c,
 * which only dispatches to it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"
#include "lock.h"
#include "runner.h"
#include "scenario_load.h"
#include "stop.h"
#include "subproc.h"

/* Read an option's number (wrk's scan_time): a decimal integer when integer,
 * else a number as strtod() reads it, with nothing after it. 0, or -1 after
 * saying on stderr that `bench cmd` got something that is not a number. */
static int bench_scan(const char *cmd, const char *text, bool integer, double *out)
{
    char *end = NULL;
    *out = integer ? (double)strtol(text, &end, 10) : strtod(text, &end);
    if (*end == '\0')
        return 0;
    fprintf(stderr, "locklab: bench %s: '%s' is not a number\n", cmd, text);
    return -1;
}


/* Parse the options of `bench cmd` (argv[0] is cmd) into what opts point
 * at; --help prints usage to stdout. Returns -1 when every option was read,
 * else the exit code: LAB_EXIT_OK after --help, LAB_EXIT_USAGE after saying
 * on stderr what is wrong. */
int bench_getopt(const char *cmd, int argc, char **argv, const struct bench_opt *opts,
                        void (*usage)(FILE *))
{
    struct option longopts[BENCH_MAX_OPTS + 2];
    int n = 0, ch, idx = 0;
    for (; opts[n].name && n < BENCH_MAX_OPTS; n++)
        longopts[n] = (struct option){opts[n].name,
                                      opts[n].flag ? no_argument : required_argument, NULL, 'o'};
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    longopts[n] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
        if (ch == 'h') {
            usage(stdout);
            return LAB_EXIT_OK;
        }
        if (ch != 'o') {
            fprintf(stderr, "locklab: bench %s: unknown or incomplete option '%s'\n\n", cmd,
                    argv[optind - 1]);
            usage(stderr);
            return LAB_EXIT_USAGE;
        }
        const struct bench_opt *o = &opts[idx];
        if (o->flag)
            *o->flag = 1;
        else if (o->str)
            *o->str = optarg;
        else if (bench_scan(cmd, optarg, o->integer, o->num) != 0)
            return LAB_EXIT_USAGE;
    }
    return -1;
}

/* A counter-workload scenario on one hot key, for the benchmarks. */
void bench_scenario(struct scenario *s, const char *name, int clients, double seconds)
{
    scenario_defaults(s); /* wait 30s, retry 100ms, counter workload, ... */
    snprintf(s->path, sizeof s->path, "(bench %s)", name);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->clients = clients;
    s->max_duration_ns = (int64_t)(seconds * 1e9);
    snprintf(s->lock_key, sizeof s->lock_key, "locklab-%s", name);
    s->ttl_ns = 30LL * 1000000000;
}

/* Run impl through s on the started backends; the result (caller frees)
 * when the run completed safe, else NULL with err filled. */
struct run_result *bench_run(const struct scenario *s, const char *impl,
                                    struct lab_err *err)
{
    const struct lock_ops *ops = lock_find(impl);
    struct run_env env = {0};
    struct run_result *res = malloc(sizeof *res);
    if (!ops || !res) {
        lab_err_set(err, ENOENT, "%s", ops ? "out of memory" : "unknown implementation");
        free(res);
        return NULL;
    }
    int rc = runner_run(s, ops, &env, &lab_stop, res, err);
    run_result_free_holds(res); /* no hold timeline in a benchmark */
    if (rc == 0 && res->verdict == VERDICT_SAFE)
        return res;
    if (!err->code)
        lab_err_set(err, EIO, "%s ended %s: %s", impl, verdict_name(res->verdict),
                    res->first_error);
    free(res);
    return NULL;
}

/* Run a bare loop once (args: the servers' connection string, seconds and,
 * when sessions > 0, that many connections at once); cycles per second,
 * or -1. Its last line: cycles=N elapsed_ns=E. */
double bench_run_bare(const char *bin, const char *conn, double seconds, int sessions)
{
    char secbuf[32], nbuf[16];
    snprintf(secbuf, sizeof secbuf, "%.3f", seconds);
    snprintf(nbuf, sizeof nbuf, "%d", sessions);
    const char *argv[] = {bin, conn, secbuf, sessions > 0 ? nbuf : NULL, NULL};
    char buf[512];
    int status = subproc_capture((char *const *)argv, buf, sizeof buf);
    const char *line = strstr(buf, "cycles=");
    long long cycles, ns;
    if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line ||
        sscanf(line, "cycles=%lld elapsed_ns=%lld", &cycles, &ns) != 2 || ns <= 0)
        return -1;
    return (double)cycles * 1e9 / (double)ns;
}
