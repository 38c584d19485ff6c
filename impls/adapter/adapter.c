/*
 * adapter.c - the lock design that drives an adapter program (see
 * adapter.h and docs/adapters.md).
 *
 * open() starts the command as a child of the client, with the servers of
 * the adapter's backend in LOCKLAB_* variables, and waits for `ready`
 * (with its capability words). acquire() writes `acquire KEY TTL_MS
 * WAIT_MS` and reads one reply before WAIT_MS plus the grace period;
 * release() writes `release KEY` and reads one reply within the grace
 * period; close() writes `quit` and reaps the child. The client marks the
 * oracle's entry as soon as acquire() returns, so entry is right after the
 * `granted` line, and its exit right before release() writes.
 *
 * An adapter is trusted with nothing: a reply that is not one of the
 * protocol's, a child that dies, or one that says nothing past its
 * deadline is an error whose message quotes the line whole (or the child's
 * end and its last stderr line: lab_err.full carries what msg cannot hold,
 * so that the client's slot keeps it); the child is then killed and reaped, and every
 * later operation of that client fails at once. The verdict of such a run
 * can only be `error` (or `violation`, if the oracle saw two holders). An
 * `error TEXT` reply is quoted whole the same way, the child living on.
 * The loader fills the spec's renewal settings, which open() passes on as
 * LOCKLAB_WATCHDOG_LEASE_MS and LOCKLAB_ETCD_KEEPALIVE.
 */
#include "adapter.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter_proc.h"

#define QUIT_WAIT_NS (1500000000LL) /* after `quit`, within the runner's stop grace */

struct lock_client {
    struct adapter_proc proc;
    const struct adapter_spec *spec;
    const struct lock_env *env;
    unsigned caps;        /* LOCK_CAP_FENCING, LOCK_CAP_REENTRANT from `ready` */
    int held;             /* grants not yet released (nested ones of a reentrant adapter) */
    bool dead;            /* the child was killed after a protocol failure */
    char why[LAB_ERR_TEXT_MAX]; /* ... and why, for every later operation */
    char text[LAB_ERR_TEXT_MAX]; /* the last `error TEXT`, quoted whole (lab_err.full) */
};

/* A line of the child's quoted whole: the longest it can write, and "...". */
#define QUOTE_MAX (ADAPTER_LINE_MAX + 8)

/* ---------------------------------------------------------------- names */

#define NAMES_MAX 64

/* The names the ops tables point to, kept for the life of the process. */
static struct {
    int n;
    char name[NAMES_MAX][64];
    char summary[NAMES_MAX][160];
    char store[NAMES_MAX][16];
} pool;

/* The pool entry for spec's name and command (an equal one is shared);
 * -1 when the pool is full. */
static int intern(const struct adapter_spec *spec)
{
    char summary[160];
    int used = snprintf(summary, sizeof summary, "adapter (%s):", spec->backend);
    const char *w = spec->argv;
    for (int i = 0; i < spec->argc && used > 0 && (size_t)used < sizeof summary; i++) {
        used += snprintf(summary + used, sizeof summary - (size_t)used, " %s", w);
        w += strlen(w) + 1;
    }
    for (int i = 0; i < pool.n; i++)
        if (!strcmp(pool.name[i], spec->name) && !strcmp(pool.summary[i], summary) &&
            !strcmp(pool.store[i], spec->store))
            return i;
    if (pool.n == NAMES_MAX)
        return -1;
    int i = pool.n++;
    snprintf(pool.name[i], sizeof pool.name[i], "%s", spec->name);
    snprintf(pool.summary[i], sizeof pool.summary[i], "%s", summary);
    snprintf(pool.store[i], sizeof pool.store[i], "%s", spec->store);
    return i;
}

/* -------------------------------------------------------------- helpers */

/* The line as it can be quoted in a one-line message. */
static void quote(char *out, size_t n, const char *line)
{
    size_t o = 0;
    for (size_t i = 0; line[i] && o + 4 < n; i++)
        out[o++] = (line[i] >= 0x20 && line[i] < 0x7f) ? line[i] : '?';
    if (line[0] && strlen(line) > o)
        memcpy(out + o - (o >= 3 ? 3 : 0), "...", 3);
    out[o] = '\0';
}

/* Kill the child after a failure; every later operation fails with why. */
static void give_up(struct lock_client *c, struct lab_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void give_up(struct lock_client *c, struct lab_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof c->why, fmt, ap);
    va_end(ap);
    adapter_proc_kill(&c->proc);
    c->dead = true;
    lab_err_set_text(err, EPROTO, c->why);
}

/* The child answered `error TEXT`: the line whole in err (it stays alive). */
static void error_reply(struct lock_client *c, const char *line, struct lab_err *err)
{
    char q[QUOTE_MAX];
    quote(q, sizeof q, line);
    snprintf(c->text, sizeof c->text, "adapter: %s", q);
    lab_err_set_text(err, EIO, c->text);
}

/* Read the reply to what (the request, for messages) within budget_ns.
 * 1 with line filled; 0 when the run stopped while waiting (the child is
 * killed: its answer could no longer be matched to a request); -1 with err
 * filled. */
static int reply(struct lock_client *c, const char *what, int64_t budget_ns, char *line,
                 size_t n, struct lab_err *err)
{
    /* a release is finished even when the run stops: it is short, and the
     * runner's grace bounds it */
    const volatile int *stop = strcmp(what, "release") ? c->env->stop : NULL;
    int r = adapter_proc_read_line(&c->proc, line, n, lab_now_ns() + budget_ns, stop);
    char q[QUOTE_MAX], end[ADAPTER_END_MAX];
    if (r == 1)
        return 1;
    if (r == -2) {
        quote(q, sizeof q, line);
        give_up(c, err, "adapter wrote a line too long after %s: '%s...'", what, q);
        return -1;
    }
    if (r == -1) {
        adapter_proc_describe_end(&c->proc, end, sizeof end);
        give_up(c, err, "adapter died during %s: %s", what, end);
        return -1;
    }
    if (stop && *stop) {
        give_up(c, err, "adapter abandoned: the run stopped during %s", what);
        return 0;
    }
    if (!strcmp(what, "startup"))
        give_up(c, err, "adapter did not say ready within %" PRId64 " ms", budget_ns / 1000000);
    else
        give_up(c, err, "adapter hung: no answer to %s within %" PRId64 " ms", what,
                budget_ns / 1000000);
    return -1;
}

static int send_line(struct lock_client *c, const char *what, const char *buf, size_t len,
                     struct lab_err *err)
{
    char end[ADAPTER_END_MAX];
    if (c->dead) {
        lab_err_set_text(err, EPIPE, c->why);
        return -1;
    }
    if (adapter_proc_write(&c->proc, buf, len) == 0)
        return 0;
    adapter_proc_describe_end(&c->proc, end, sizeof end);
    give_up(c, err, "adapter died before %s: %s", what, end);
    return -1;
}

/* ----------------------------------------------------------------- hooks */

static int put_env(char **env, int *n, char *store, size_t *used, size_t cap, const char *fmt,
                   ...) __attribute__((format(printf, 6, 7)));
static int put_env(char **env, int *n, char *store, size_t *used, size_t cap, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(store + *used, cap - *used, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= cap - *used)
        return -1;
    env[(*n)++] = store + *used;
    *used += (size_t)w + 1;
    return 0;
}

static int parse_ready(struct lock_client *c, char *line, struct lab_err *err)
{
    char q[sizeof c->why];
    char *save, *w = strtok_r(line, " ", &save);
    if (!w || strcmp(w, "ready") != 0)
        goto bad;
    while ((w = strtok_r(NULL, " ", &save))) {
        if (!strcmp(w, "fencing"))
            c->caps |= LOCK_CAP_FENCING;
        else if (!strcmp(w, "reentrant"))
            c->caps |= LOCK_CAP_REENTRANT;
        else
            goto bad;
    }
    return 0;
bad:
    memcpy(q, c->why, sizeof q); /* the line, saved before strtok */
    give_up(c, err, "adapter: expected 'ready [fencing] [reentrant]', got '%s'", q);
    return -1;
}

static int adapter_open(struct lock_client **out, const struct lock_env *env,
                        struct lab_err *err)
{
    const struct adapter_spec *spec = env->options;
    if (!spec || spec->argc < 1) {
        lab_err_set(err, EINVAL, "adapter: no command");
        return -1;
    }
    struct lock_client *c = calloc(1, sizeof *c);
    if (!c) {
        lab_err_set(err, ENOMEM, "out of memory");
        return -1;
    }
    c->spec = spec;
    c->env = env;
    c->proc.pid = 0;
    c->proc.to_fd = c->proc.from_fd = c->proc.err_fd = c->proc.log_fd = -1;
    *out = c;

    char *argv[ADAPTER_MAX_ARGS + 1];
    char words[ADAPTER_CMD_MAX];
    memcpy(words, spec->argv, sizeof words);
    char *w = words;
    for (int i = 0; i < spec->argc && i < ADAPTER_MAX_ARGS; i++) {
        argv[i] = w;
        w += strlen(w) + 1;
    }
    argv[spec->argc < ADAPTER_MAX_ARGS ? spec->argc : ADAPTER_MAX_ARGS] = NULL;

    /* the store's variables (lock_servers.env), then the client's own */
    char *vars[ADAPTER_MAX_ENV + 4], store[192];
    int n = 0;
    size_t used = 0;
    int rc = 0;
    char *e = (char *)env->servers->env; /* entries live as long as the client's env */
    for (; *e && n < ADAPTER_MAX_ENV; e += strlen(e) + 1)
        vars[n++] = e;
    rc |= *e ? -1 : 0;
    rc |= put_env(vars, &n, store, &used, sizeof store, "LOCKLAB_CLIENT=%d", env->client_id);
    rc |= put_env(vars, &n, store, &used, sizeof store, "LOCKLAB_CLIENTS=%d", env->clients);
    /* the scenario's renewal settings, for a library that renews */
    if (spec->watchdog_lease_ns > 0)
        rc |= put_env(vars, &n, store, &used, sizeof store, "LOCKLAB_WATCHDOG_LEASE_MS=%" PRId64,
                      spec->watchdog_lease_ns / 1000000);
    if (spec->etcd_keepalive >= 0)
        rc |= put_env(vars, &n, store, &used, sizeof store, "LOCKLAB_ETCD_KEEPALIVE=%s",
                      spec->etcd_keepalive ? "true" : "false");
    if (rc != 0) {
        lab_err_set(err, E2BIG, "adapter: environment too long");
        return -1;
    }
    /* the child's stderr is kept per client in the run's results, if any */
    char log_path[sizeof c->proc.log_path];
    int path_len = env->log_dir ? snprintf(log_path, sizeof log_path, "%s/client-%d.txt",
                                           env->log_dir, env->client_id)
                                : -1;
    bool keep = path_len > 0 && (size_t)path_len < sizeof log_path; /* never a cut name */
    if (adapter_proc_start(&c->proc, argv, spec->dir, vars, n, keep ? log_path : NULL, err) != 0)
        return -1;

    char line[ADAPTER_LINE_MAX + 1];
    if (reply(c, "startup", spec->ready_timeout_ns, line, sizeof line, err) != 1)
        return -1;
    quote(c->why, sizeof c->why, line);
    if (parse_ready(c, line, err) != 0)
        return -1;
    c->why[0] = '\0';
    return 0;
}

/* "granted" or "granted TOKEN": 0 with the token (0: none) or -1. */
static int parse_granted(const char *line, int64_t *token)
{
    *token = 0;
    if (!strcmp(line, "granted"))
        return 0;
    if (strncmp(line, "granted ", 8) != 0)
        return -1;
    const char *d = line + 8;
    int64_t v = 0;
    if (!*d)
        return -1;
    for (; *d; d++) {
        if (*d < '0' || *d > '9' || v > (INT64_MAX - (*d - '0')) / 10)
            return -1;
        v = v * 10 + (*d - '0');
    }
    *token = v;
    return v > 0 ? 0 : -1;
}

static enum lock_status adapter_acquire(struct lock_client *c, const char *key, int64_t wait_ns,
                                        struct lab_err *err)
{
    char req[256], line[ADAPTER_LINE_MAX + 1], q[QUOTE_MAX];
    int64_t ttl_ms = c->env->ttl_ns / 1000000, wait_ms = wait_ns / 1000000;
    int len = snprintf(req, sizeof req, "acquire %s %" PRId64 " %" PRId64 "\n", key,
                       ttl_ms > 0 ? ttl_ms : 1, wait_ms);
    if (send_line(c, "acquire", req, (size_t)len, err) != 0)
        return LOCK_ERROR;
    int r = reply(c, "acquire", wait_ns + c->spec->grace_ns, line, sizeof line, err);
    if (r == 0)
        return LOCK_TIMEOUT;
    if (r < 0)
        return LOCK_ERROR;
    int64_t token;
    if (parse_granted(line, &token) == 0) {
        if ((c->caps & LOCK_CAP_FENCING) && token == 0) {
            give_up(c, err, "adapter said fencing but granted without a token: '%s'", line);
            return LOCK_ERROR;
        }
        if ((c->caps & LOCK_CAP_FENCING) && c->held == 0)
            c->env->stats->fence_token = token; /* a nested grant keeps the outer one's */
        c->held++;
        return LOCK_GRANTED;
    }
    if (!strcmp(line, "timeout"))
        return LOCK_TIMEOUT;
    if (!strncmp(line, "error ", 6) || !strcmp(line, "error")) {
        error_reply(c, line, err);
        return LOCK_ERROR;
    }
    quote(q, sizeof q, line);
    give_up(c, err, "adapter: bad reply to acquire: '%s'%s", q,
            strncmp(line, "granted ", 8) ? "" : " (a token is a decimal from 1 up)");
    return LOCK_ERROR;
}

static enum release_status adapter_release(struct lock_client *c, const char *key,
                                           struct lab_err *err)
{
    char req[256], line[ADAPTER_LINE_MAX + 1], q[QUOTE_MAX];
    int len = snprintf(req, sizeof req, "release %s\n", key);
    if (send_line(c, "release", req, (size_t)len, err) != 0)
        return RELEASE_ERROR;
    if (c->held > 0)
        c->held--;
    if (reply(c, "release", c->spec->grace_ns, line, sizeof line, err) != 1)
        return RELEASE_ERROR;
    if (!strcmp(line, "released"))
        return RELEASE_OK;
    if (!strcmp(line, "released ?"))
        return RELEASE_UNCHECKED;
    if (!strcmp(line, "not-owner"))
        return RELEASE_NOT_OWNER;
    if (!strncmp(line, "error ", 6) || !strcmp(line, "error")) {
        error_reply(c, line, err);
        return RELEASE_ERROR;
    }
    quote(q, sizeof q, line);
    give_up(c, err, "adapter: bad reply to release: '%s'", q);
    return RELEASE_ERROR;
}

static void adapter_close(struct lock_client *c)
{
    if (!c)
        return;
    if (!c->dead && c->proc.pid > 0 && adapter_proc_write(&c->proc, "quit\n", 5) == 0)
        adapter_proc_finish(&c->proc, QUIT_WAIT_NS);
    adapter_proc_kill(&c->proc);
    free(c);
}

int adapter_ops_init(struct lock_ops *ops, const struct adapter_spec *spec)
{
    int i = intern(spec);
    if (i < 0)
        return -1;
    *ops = (struct lock_ops){
        .name = pool.name[i],
        .backend = pool.store[i],
        .summary = pool.summary[i],
        .caps = spec->caps,
        .open = adapter_open,
        .acquire = adapter_acquire,
        .release = adapter_release,
        .close = adapter_close,
    };
    return 0;
}

bool adapter_is(const struct lock_ops *ops)
{
    return ops && ops->open == adapter_open;
}

pid_t adapter_pid(const struct lock_client *c)
{
    return c ? c->proc.pid : 0;
}

unsigned adapter_caps(const struct lock_client *c)
{
    return c ? c->caps : 0;
}
