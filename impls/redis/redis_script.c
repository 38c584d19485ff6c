/*
 * redis_script.c - the scenario brings its own Lua lock scripts.
 *
 * So that a user can test their own lock script without writing C:
 * lock.script.acquire, .release and optionally .renew are loaded as they
 * are, and called with KEYS[1] = lock key, ARGV[1] = this client's token,
 * ARGV[2] = TTL in ms. acquire returns 1 when granted (polled like the
 * other designs), release 1 when it released our lock and 0 when the lock
 * was not ours, renew 1 when it extended the lock (run by a watchdog every
 * ttl/3 while held, only when the scenario gives one). A script that fails
 * at run time is counted as an error of the operation, never a crash; a
 * script that grants when it should not is caught by the oracle like any
 * other broken lock. The scripts are the design's own settings
 * (struct rscr_options, the rows of lock.script), so the harness never
 * knows them.
 *
 * The protocol is redis_machine.c's (REDIS_SM_SCRIPT), in either mode.
 */
#include <errno.h>

#include "redis_drive.h"

#define RSCR_SCRIPT_MAX 4096 /* bytes of a script, with its NUL */

/* redis-script's own settings: lock.script in the scenario. */
struct rscr_options {
    char acquire[RSCR_SCRIPT_MAX]; /* lock.script.acquire: required when listed */
    char release[RSCR_SCRIPT_MAX]; /* lock.script.release: required when listed */
    char renew[RSCR_SCRIPT_MAX];   /* lock.script.renew: optional ("" = no watchdog) */
};

static const struct opt rscr_script_rows[] = {
    { .name = "acquire", .type = OPT_STR, OPT_FIELD(struct rscr_options, acquire),
      .flags = OPT_NONEMPTY,
      .help = "Lua: KEYS[1] lock key, ARGV[1] token, ARGV[2] ttl ms; 1 when granted" },
    { .name = "release", .type = OPT_STR, OPT_FIELD(struct rscr_options, release),
      .flags = OPT_NONEMPTY, .help = "Lua: same KEYS/ARGV; 1 when this call released the lock" },
    { .name = "renew", .type = OPT_STR, OPT_FIELD(struct rscr_options, renew),
      .flags = OPT_NONEMPTY, .help = "Lua: same KEYS/ARGV; 1 when extended" },
    { .name = NULL }
};

static const struct opt rscr_option_rows[] = {
    { .name = "script", .type = OPT_SECTION, .sub = rscr_script_rows,
      .help = "Lua scripts for redis-script" },
    { .name = NULL }
};

/* It cannot run without its acquire and release scripts; a scenario that
 * does not list it (it may still run by --impl) need not give them. */
static int rscr_finish_options(void *options, const struct lock_opts_ctx *ctx,
                               struct lab_err *err)
{
    const struct rscr_options *o = options;
    if (!ctx->listed || (o->acquire[0] && o->release[0]))
        return 0;
    lab_err_set(err, EINVAL,
                "redis-script needs lock.script.acquire and lock.script.release (missing: %s)",
                !o->acquire[0] ? "acquire" : "release");
    return -1;
}

static void rscr_setup(struct redis_sm *m)
{
    const struct rscr_options *o = m->env->options;
    m->script[RSM_SC_ACQUIRE].src = o->acquire;
    m->script[RSM_SC_RELEASE].src = o->release;
    m->script[RSM_SC_RENEW].src = o->renew[0] ? o->renew : NULL;
}

static const struct redis_sm_design rscr = {.kind = REDIS_SM_SCRIPT, .name = "redis-script",
                                            .setup = rscr_setup};

REDIS_SM_HOOKS(rscr, rscr);

const struct lock_ops lock_redis_script = {
    .name = "redis-script",
    .backend = "redis",
    .summary = "acquire/release/renew Lua scripts from the scenario: test your own lock script",
    .caps = LOCK_CAP_TTL,
    .no_fencing = "the scenario's own scripts grant the lock; they return no token",
    .open = rscr_open,
    .acquire = redis_block_acquire,
    .release = redis_block_release,
    .close = redis_block_close,
    .async = &rscr_async,
    .options = rscr_option_rows,
    .options_size = sizeof(struct rscr_options),
    .finish_options = rscr_finish_options,
};
