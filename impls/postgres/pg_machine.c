/*
 * pg_machine.c - the PostgreSQL designs' protocol, without I/O (see
 * pg_machine.h).
 *
 * Every operation is a short walk through enum pg_sm_step, one statement
 * in flight at a time: an open connects (and pg-for-update makes its
 * table), an acquire sets lock_timeout when the session has another and
 * sends the statement that waits for the lock, a release sends the unlock
 * or the COMMIT. What a result means is read in on_result(), what a lost
 * session means in pg_sm_lost(). The holds are counted per session: a lost
 * session moves them to the orphans, which the caller still releases.
 */
#include "pg_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char table_sql[] = "CREATE TABLE IF NOT EXISTS locklab_locks (name text PRIMARY KEY)";

void pg_sm_init(struct pg_sm *m, const struct pg_sm_design *d, const struct lock_env *env)
{
    memset(m, 0, sizeof *m);
    m->design = d;
    m->env = env;
    m->lock_timeout_ms = -1;
}

void pg_key_id(const char *key, char *buf, size_t n)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    snprintf(buf, n, "%lld", (long long)(int64_t)h);
}

/* s as a string literal after prefix, then suffix, into out (as
 * PQescapeLiteral quotes: quotes and backslashes doubled, E'' when there is
 * a backslash, so it reads the same whatever standard_conforming_strings
 * is). false when it does not fit. */
static bool literal_sql(char *out, size_t n, const char *prefix, const char *s, const char *suffix)
{
    size_t i = (size_t)snprintf(out, n, "%s%s'", prefix, strchr(s, '\\') ? "E" : "");
    for (; *s && i + 2 < n; s++) {
        if (*s == '\'' || *s == '\\')
            out[i++] = *s;
        out[i++] = *s;
    }
    return !*s && i + (size_t)snprintf(out + i, n - i, "'%s", suffix) < n;
}

/* ------------------------------------------------------------ sending */

/* The statement of m->step into sql and params; false when it cannot be
 * written (err filled). */
static bool build(struct pg_sm *m)
{
    m->nparams = 0;
    switch (m->step) {
    case PSM_TABLE:
        snprintf(m->sql, sizeof m->sql, "%s", table_sql);
        break;
    case PSM_TIMEOUT:
        snprintf(m->sql, sizeof m->sql, "SET lock_timeout = %lld", (long long)m->wait_ms);
        break;
    case PSM_LOCK:
        if (m->design->kind == PG_SM_ADVISORY) {
            snprintf(m->sql, sizeof m->sql, "SELECT pg_advisory_lock($1::bigint)");
            m->params[m->nparams++] = m->id;
        } else if (!literal_sql(m->sql, sizeof m->sql,
                                m->holds > 0 ? "SELECT 1 FROM locklab_locks WHERE name = "
                                             : "BEGIN; SELECT 1 FROM locklab_locks WHERE name = ",
                                m->key, " FOR UPDATE")) {
            lab_err_set(&m->err, E2BIG, "the lock key is too long for pg-for-update");
            return false;
        }
        break;
    case PSM_ROW:
        snprintf(m->sql, sizeof m->sql,
                 "INSERT INTO locklab_locks (name) VALUES ($1) ON CONFLICT DO NOTHING");
        m->params[m->nparams++] = m->key;
        break;
    case PSM_UNLOCK:
        snprintf(m->sql, sizeof m->sql, "SELECT pg_advisory_unlock($1::bigint)");
        m->params[m->nparams++] = m->id;
        break;
    case PSM_ROLLBACK:
    case PSM_COMMIT:
        snprintf(m->sql, sizeof m->sql, m->step == PSM_COMMIT ? "COMMIT" : "ROLLBACK");
        break;
    case PSM_IDLE:
        break;
    }
    return true;
}

static enum pg_sm_act failed(struct pg_sm *m);

/* Send m->step, on a new session first when there is none; the lock
 * statement after a SET lock_timeout when the session has another. Every
 * statement counts as a round trip but the open's CREATE TABLE. */
static enum pg_sm_act send(struct pg_sm *m)
{
    if (!m->session)
        return PG_SM_CONNECT;
    if (m->step == PSM_LOCK && m->lock_timeout_ms != m->wait_ms)
        m->step = PSM_TIMEOUT;
    if (!build(m))
        return failed(m);
    if (m->step != PSM_TABLE)
        m->env->stats->round_trips++;
    return PG_SM_SEND;
}

static enum pg_sm_act send_step(struct pg_sm *m, enum pg_sm_step step)
{
    m->step = step;
    return send(m);
}

/* ------------------------------------------------------------ outcomes */

static enum pg_sm_act done(struct pg_sm *m)
{
    m->op = PSM_OP_NONE;
    m->step = PSM_IDLE;
    return PG_SM_DONE;
}

static enum pg_sm_act opened(struct pg_sm *m, int rc)
{
    m->open_rc = rc;
    return done(m);
}

static enum pg_sm_act acquired(struct pg_sm *m, enum lock_status st)
{
    if (st == LOCK_GRANTED)
        m->holds++;
    m->status = st;
    return done(m);
}

static enum pg_sm_act released(struct pg_sm *m, enum release_status rs)
{
    m->release = rs;
    return done(m);
}

/* The operation under way failed; m->err says how. */
static enum pg_sm_act failed(struct pg_sm *m)
{
    switch (m->op) {
    case PSM_OP_OPEN:
        return opened(m, -1);
    case PSM_OP_ACQUIRE:
        return acquired(m, LOCK_ERROR);
    case PSM_OP_RELEASE:
    case PSM_OP_NONE:
        break;
    }
    return released(m, RELEASE_ERROR);
}

/* The session is gone, and its holds with it. */
static void session_gone(struct pg_sm *m)
{
    m->session = false;
    m->lock_timeout_ms = -1;
    m->orphans += m->holds;
    m->holds = 0;
}

/* ------------------------------------------------------------ results */

static bool state_is(const struct pg_sm_result *r, const char *state)
{
    return r->sqlstate && strcmp(r->sqlstate, state) == 0;
}

/* The server ends the session: shutting down, crashed, or a connection
 * exception. */
static bool goodbye(const struct pg_sm_result *r)
{
    return state_is(r, "57P01") || state_is(r, "57P02") || state_is(r, "57P03") ||
           (r->sqlstate && strncmp(r->sqlstate, "08", 2) == 0);
}

static void result_error(struct pg_sm *m, const struct pg_sm_result *r)
{
    const char *msg = r->message ? r->message : "error";
    int len = (int)strcspn(msg, "\n");
    lab_err_set(&m->err, EIO, "PostgreSQL: %.*s", len > 110 ? 110 : len, msg);
}

/* The outcome of a lock statement that granted nothing. */
static enum lock_status not_granted(struct pg_sm *m, const struct pg_sm_result *r)
{
    if (r->ok) {
        lab_err_set(&m->err, ENOENT, "the row of lock '%.80s' is missing", m->key);
        return LOCK_ERROR;
    }
    if (state_is(r, "55P03"))
        return LOCK_TIMEOUT;
    result_error(m, r);
    return LOCK_ERROR;
}

/* pg-for-update's SELECT ... FOR UPDATE answered. */
static enum pg_sm_act selected(struct pg_sm *m, const struct pg_sm_result *r)
{
    bool nested = m->holds > 0;
    if (r->ok && r->rows == 1 && r->txn == PG_TXN_IN)
        return acquired(m, LOCK_GRANTED);
    if (r->ok && !nested && !m->made_row) { /* no row yet: give back, make it, lock it */
        m->after = PSM_ROW;
        return send_step(m, PSM_ROLLBACK);
    }
    enum lock_status st = not_granted(m, r);
    if (r->txn == PG_TXN_FAILED || (r->txn == PG_TXN_IN && !nested)) {
        /* a failed statement failed the transaction, the outer holds with
         * it; an empty one holds nothing: give it back */
        m->orphans += m->holds;
        m->holds = 0;
        m->after = PSM_IDLE;
        m->ends = st;
        return send_step(m, PSM_ROLLBACK);
    }
    return acquired(m, st);
}

static enum pg_sm_act rolled_back(struct pg_sm *m)
{
    if (m->after == PSM_ROW)
        return send_step(m, PSM_ROW);
    return acquired(m, m->ends);
}

static enum pg_sm_act on_result(struct pg_sm *m, const struct pg_sm_result *r)
{
    switch (m->step) {
    case PSM_TABLE:
        /* two sessions creating it at once: the later one fails on the
         * other's catalog rows, and the table is there */
        if (r->ok || state_is(r, "23505") || state_is(r, "42710") || state_is(r, "42P07"))
            return opened(m, 0);
        result_error(m, r);
        return opened(m, -1);
    case PSM_TIMEOUT:
        if (!r->ok)
            break;
        m->lock_timeout_ms = m->wait_ms;
        return send_step(m, PSM_LOCK);
    case PSM_LOCK:
        if (m->design->kind == PG_SM_FOR_UPDATE)
            return selected(m, r);
        return acquired(m, r->ok ? LOCK_GRANTED : not_granted(m, r));
    case PSM_ROLLBACK: /* whatever it answers, nothing is open now */
        return rolled_back(m);
    case PSM_ROW:
        if (!r->ok)
            break;
        m->made_row = true;
        return send_step(m, PSM_LOCK);
    case PSM_UNLOCK:
        m->holds--;
        if (!r->ok)
            break;
        return released(m, r->value && r->value[0] == 't' ? RELEASE_OK : RELEASE_NOT_OWNER);
    case PSM_COMMIT:
        m->holds--;
        if (!r->ok)
            break;
        /* "ROLLBACK": the transaction had failed */
        return released(m, r->tag && strcmp(r->tag, "COMMIT") == 0 ? RELEASE_OK
                                                                   : RELEASE_NOT_OWNER);
    case PSM_IDLE:
        return PG_SM_IGNORED;
    }
    result_error(m, r);
    return failed(m);
}

/* ------------------------------------------------------------ operations */

enum pg_sm_act pg_sm_open(struct pg_sm *m)
{
    m->op = PSM_OP_OPEN;
    m->step = m->design->kind == PG_SM_FOR_UPDATE ? PSM_TABLE : PSM_IDLE;
    return send(m);
}

enum pg_sm_act pg_sm_acquire(struct pg_sm *m, const char *key, int64_t wait_ns)
{
    m->op = PSM_OP_ACQUIRE;
    m->key = key;
    m->made_row = false;
    if (m->orphans > 0) {
        lab_err_set(&m->err, ECONNRESET,
                    "the session holding lock '%.80s' was lost: a nested acquire holds nothing",
                    key);
        return failed(m);
    }
    int64_t ms = wait_ns / 1000000; /* whole ms, at least 1: 0 would mean no bound */
    m->wait_ms = ms < 1 ? 1 : ms > 2147483647 ? 2147483647 : ms;
    pg_key_id(key, m->id, sizeof m->id);
    return send_step(m, PSM_LOCK);
}

enum pg_sm_act pg_sm_release(struct pg_sm *m, const char *key)
{
    m->op = PSM_OP_RELEASE;
    m->key = key;
    if (m->orphans > 0) {
        m->orphans--; /* its session, and the lock, are gone */
        return released(m, RELEASE_NOT_OWNER);
    }
    if (m->holds == 0)
        return released(m, RELEASE_NOT_OWNER);
    if (m->design->kind == PG_SM_ADVISORY) {
        pg_key_id(key, m->id, sizeof m->id);
        return send_step(m, PSM_UNLOCK);
    }
    if (m->holds > 1) { /* a nested hold: the outermost release commits */
        m->holds--;
        return released(m, RELEASE_OK);
    }
    return send_step(m, PSM_COMMIT);
}

/* ------------------------------------------------------------ events */

enum pg_sm_act pg_sm_connected(struct pg_sm *m, bool ok, const struct lab_err *err)
{
    if (m->op == PSM_OP_NONE)
        return PG_SM_IGNORED;
    if (!ok) {
        if (err)
            m->err = *err;
        return failed(m);
    }
    m->session = true;
    m->lock_timeout_ms = -1;
    if (m->step == PSM_IDLE) /* an open with nothing to send */
        return opened(m, 0);
    return send(m);
}

enum pg_sm_act pg_sm_result(struct pg_sm *m, const struct pg_sm_result *r)
{
    if (m->op == PSM_OP_NONE)
        return PG_SM_IGNORED; /* nothing of ours in flight */
    if (!r->ok && goodbye(r))
        return pg_sm_lost(m, r->message);
    return on_result(m, r);
}

enum pg_sm_act pg_sm_lost(struct pg_sm *m, const char *why)
{
    if (m->op == PSM_OP_RELEASE && m->holds > 0)
        m->holds--; /* the hold being released ends with its session */
    session_gone(m);
    if (m->op == PSM_OP_NONE)
        return PG_SM_IGNORED;
    const char *msg = why && why[0] ? why : "connection lost";
    int len = (int)strcspn(msg, "\n");
    lab_err_set(&m->err, EIO, "PostgreSQL request: %.*s", len > 100 ? 100 : len, msg);
    if (m->step == PSM_ROLLBACK && m->after == PSM_IDLE)
        return acquired(m, m->ends); /* the session's end rolled it back */
    return failed(m);
}

enum pg_sm_act pg_sm_stop(struct pg_sm *m)
{
    if (m->op != PSM_OP_ACQUIRE || m->step != PSM_LOCK || !m->session)
        return PG_SM_IGNORED; /* not a lock wait under way */
    session_gone(m);
    m->status = LOCK_TIMEOUT;
    m->op = PSM_OP_NONE;
    m->step = PSM_IDLE;
    return PG_SM_CLOSE;
}
