/*
 * mysql_machine.c - the MariaDB designs' protocol, without I/O (see
 * mysql_machine.h).
 *
 * Every operation is a short walk through enum mysql_sm_step: an open
 * connects, an acquire sends its statements until granted, an error or the
 * wait budget spent (mysql-unique pausing between attempts as lock_poll
 * does, counting polls and the lease floor the same way), a release sends
 * one statement (or none). One statement is in flight at a time; one that
 * finds no connection connects first. What an answer means is read in
 * on_answer(); the machine reads no clock: the time comes with every
 * event.
 */
#include "mysql_machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lock_poll.h"
#include "mysql_conn.h"

#define SLICE_NS 1000000000LL /* GET_LOCK waits at most this long a statement */

void mysql_sm_init(struct mysql_sm *m, enum mysql_sm_kind kind, const struct lock_env *env,
                   const char *token)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
    m->env = env;
    snprintf(m->token, sizeof m->token, "%s", token);
}

/* in, escaped for a '...' literal as mysql_real_escape_string does on a
 * connection without NO_BACKSLASH_ESCAPES (no byte of a multi-byte UTF-8
 * character is one of these). 0, or -1 when it does not fit. */
static int quote(const char *in, char *out, size_t n)
{
    static const char special[] = "\n\r\\'\"\032", as[] = "nr\\'\"Z";
    size_t o = 0;
    for (; *in; in++) {
        const char *e = strchr(special, *in);
        if (o + 3 > n)
            return -1;
        if (e)
            out[o++] = '\\', out[o++] = as[e - special];
        else
            out[o++] = *in;
    }
    out[o] = '\0';
    return 0;
}

/* ------------------------------------------------------------ sending */

/* The lease in whole milliseconds, as lock_poll counts it, in microseconds. */
static long long ttl_us(const struct mysql_sm *m)
{
    return (long long)(m->env->ttl_ns / 1000000) * 1000;
}

/* The statement of m->step into sql, at now. */
static void build(struct mysql_sm *m, int64_t now)
{
    char *s = m->sql;
    size_t n = sizeof m->sql;
    const char *q = m->q, *tok = m->token;
    int64_t left = m->deadline - now;
    m->waits = m->step == MSM_GET_LOCK || m->step == MSM_ROW;
    switch (m->step) {
    case MSM_IDLE:
        s[0] = '\0';
        break;
    case MSM_GET_LOCK:
        left = left < 0 ? 0 : left > SLICE_NS ? SLICE_NS : left;
        snprintf(s, n, "SELECT GET_LOCK('locklab/%s', %.3f)", q, (double)left / 1e9);
        break;
    case MSM_RELEASE_LOCK:
        snprintf(s, n, "SELECT RELEASE_LOCK('locklab/%s')", q);
        break;
    case MSM_BEGIN:
        snprintf(s, n, "START TRANSACTION");
        break;
    case MSM_ROW:
        snprintf(s, n, "SELECT holder FROM " MYSQL_CONN_ROWS " WHERE name = '%s' FOR UPDATE WAIT 1",
                 q);
        break;
    case MSM_ROLLBACK:
        snprintf(s, n, "ROLLBACK");
        break;
    case MSM_COMMIT:
        snprintf(s, n, "COMMIT");
        break;
    case MSM_INSERT:
        snprintf(s, n,
                 "INSERT INTO " MYSQL_CONN_LOCKS " (name, owner, expires_at) VALUES "
                 "('%s', '%s', NOW(6) + INTERVAL %lld MICROSECOND)",
                 q, tok, ttl_us(m));
        break;
    case MSM_TAKEOVER:
        snprintf(s, n,
                 "UPDATE " MYSQL_CONN_LOCKS " SET owner = '%s', expires_at = NOW(6) + INTERVAL "
                 "%lld MICROSECOND WHERE name = '%s' AND expires_at < NOW(6)",
                 tok, ttl_us(m), q);
        break;
    case MSM_DELETE:
        snprintf(s, n, "DELETE FROM " MYSQL_CONN_LOCKS " WHERE name = '%s' AND owner = '%s'", q,
                 tok);
        break;
    case MSM_READ:
        snprintf(s, n, "SELECT stock, version FROM " MYSQL_CONN_STOCK " WHERE name = '%s'", q);
        break;
    case MSM_WRITE:
        snprintf(s, n,
                 "UPDATE " MYSQL_CONN_STOCK " SET stock = stock - 1, version = version + 1 "
                 "WHERE name = '%s' AND version = %lld",
                 q, (long long)m->version);
        break;
    }
}

/* Send step: on a new connection first when there is none. */
static enum mysql_sm_act send_step(struct mysql_sm *m, enum mysql_sm_step step, int64_t now)
{
    m->step = step;
    if (!m->connected)
        return MYSQL_SM_CONNECT;
    build(m, now);
    m->env->stats->round_trips++;
    return MYSQL_SM_SEND;
}

/* ------------------------------------------------------------ outcomes */

static enum mysql_sm_act done(struct mysql_sm *m)
{
    m->op = MSM_OP_NONE;
    m->step = MSM_IDLE;
    m->waits = false;
    return MYSQL_SM_DONE;
}

static enum mysql_sm_act acquired(struct mysql_sm *m, enum lock_status st)
{
    if (st == LOCK_GRANTED && m->kind == MYSQL_SM_UNIQUE) /* the lease from the attempt on */
        m->env->stats->lease_floor_ns = m->sent + m->env->ttl_ns / 1000000 * 1000000;
    m->status = st;
    return done(m);
}

static enum mysql_sm_act released(struct mysql_sm *m, enum release_status rs)
{
    m->release = rs;
    return done(m);
}

/* The operation under way failed; m->err says how. */
static enum mysql_sm_act failed(struct mysql_sm *m)
{
    if (m->op == MSM_OP_OPEN) {
        m->open_rc = -1;
        return done(m);
    }
    return m->op == MSM_OP_ACQUIRE ? acquired(m, LOCK_ERROR) : released(m, RELEASE_ERROR);
}

/* The ROLLBACK of a given-up acquire answered, failed or was lost: the
 * outcome (and its error) is the one that asked for it. */
static enum mysql_sm_act rolled_back(struct mysql_sm *m)
{
    m->in_txn = false;
    return acquired(m, m->outcome);
}

/* mysql-for-update gives its acquire up: ROLLBACK when the connection is
 * still up, then st. */
static enum mysql_sm_act give_up(struct mysql_sm *m, enum lock_status st, int64_t now)
{
    m->outcome = st;
    return m->connected ? send_step(m, MSM_ROLLBACK, now) : rolled_back(m);
}

/* ------------------------------------------------------------ steps */

/* Each design's first statement of an acquire, and of a release. */
static const enum mysql_sm_step acquire_step[] = {
    [MYSQL_SM_GET_LOCK] = MSM_GET_LOCK, [MYSQL_SM_FOR_UPDATE] = MSM_BEGIN,
    [MYSQL_SM_UNIQUE] = MSM_INSERT, [MYSQL_SM_OPTIMISTIC] = MSM_READ};
static const enum mysql_sm_step release_step[] = {
    [MYSQL_SM_GET_LOCK] = MSM_RELEASE_LOCK, [MYSQL_SM_FOR_UPDATE] = MSM_COMMIT,
    [MYSQL_SM_UNIQUE] = MSM_DELETE, [MYSQL_SM_OPTIMISTIC] = MSM_WRITE};

static enum mysql_sm_act attempt(struct mysql_sm *m, int64_t now)
{
    m->sent = now;
    return send_step(m, acquire_step[m->kind], now);
}

/* mysql-unique's lock was taken: pause, or give up when the budget is spent. */
static enum mysql_sm_act taken(struct mysql_sm *m, int64_t now)
{
    m->env->stats->polls++;
    int64_t pause = lock_poll_next_at(m->env, m->attempt++, m->deadline, now, false);
    if (pause <= 0)
        return acquired(m, LOCK_TIMEOUT);
    m->wake_at = now + pause;
    return MYSQL_SM_SLEEP;
}

/* The budget is spent or the run stops. */
static bool over(const struct mysql_sm *m, int64_t now)
{
    return *m->env->stop || now >= m->deadline;
}

/* An error answer at m->step (m->err says it): the few that are
 * contention, else the operation fails (giving its transaction up). */
static enum mysql_sm_act on_error(struct mysql_sm *m, int64_t now)
{
    int code = m->err.code;
    switch (m->step) {
    case MSM_ROW:
        if (code == MYSQL_CONN_LOCK_WAIT && !over(m, now))
            return send_step(m, MSM_ROW, now);
        return give_up(m, code == MYSQL_CONN_LOCK_WAIT ? LOCK_TIMEOUT : LOCK_ERROR, now);
    case MSM_INSERT:
        /* InnoDB may pick this INSERT as a deadlock victim when it races a
         * DELETE of the same key: nothing was written, it is one more try */
        if (code == MYSQL_CONN_DEADLOCK)
            return taken(m, now);
        if (code == MYSQL_CONN_DUP_ENTRY) /* taken: take it over if its lease ran out */
            return send_step(m, MSM_TAKEOVER, now);
        break;
    case MSM_TAKEOVER:
        if (code == MYSQL_CONN_DEADLOCK || code == MYSQL_CONN_LOCK_WAIT)
            return taken(m, now);
        break;
    default:
        break;
    }
    return failed(m);
}

/* A statement's answer at m->step. */
static enum mysql_sm_act on_answer(struct mysql_sm *m, const struct mysql_sm_result *r,
                                   int64_t now)
{
    switch (m->step) {
    case MSM_IDLE:
        break;
    case MSM_GET_LOCK:
        if (r->null0) {
            lab_err_set(&m->err, EIO, "GET_LOCK('locklab/%s') answered NULL", m->key);
            return failed(m);
        }
        if (r->v[0] == 1)
            return acquired(m, LOCK_GRANTED);
        return over(m, now) ? acquired(m, LOCK_TIMEOUT) : send_step(m, MSM_GET_LOCK, now);
    case MSM_RELEASE_LOCK:
        return released(m, !r->null0 && r->v[0] == 1 ? RELEASE_OK : RELEASE_NOT_OWNER);
    case MSM_BEGIN:
        m->in_txn = true;
        return send_step(m, MSM_ROW, now);
    case MSM_ROW:
        if (r->row)
            return acquired(m, LOCK_GRANTED);
        lab_err_set(&m->err, ENOENT, "no row '%s' in %s to lock", m->key, MYSQL_CONN_ROWS);
        return give_up(m, LOCK_ERROR, now);
    case MSM_ROLLBACK:
        return rolled_back(m);
    case MSM_COMMIT:
        return released(m, RELEASE_OK);
    case MSM_INSERT:
        return r->affected == 1 ? acquired(m, LOCK_GRANTED) : send_step(m, MSM_TAKEOVER, now);
    case MSM_TAKEOVER:
        return r->affected == 1 ? acquired(m, LOCK_GRANTED) : taken(m, now);
    case MSM_DELETE:
        return released(m, r->affected == 1 ? RELEASE_OK : RELEASE_NOT_OWNER);
    case MSM_READ:
        if (!r->row) {
            lab_err_set(&m->err, ENOENT, "no stock row '%s' in %s", m->key, MYSQL_CONN_STOCK);
            return failed(m);
        }
        m->stock = r->v[0];
        m->version = r->v[1];
        m->env->stats->read_stock = r->v[0];
        return acquired(m, LOCK_GRANTED);
    case MSM_WRITE:
        if (r->affected == 0)
            m->env->stats->polls++; /* a conflict: the unit is retried */
        return released(m, r->affected == 1 ? RELEASE_OK : RELEASE_NOT_OWNER);
    }
    lab_err_set(&m->err, EPROTO, "MariaDB: an answer with no statement in flight");
    return failed(m);
}

/* ------------------------------------------------------------ events */

/* Start an operation on key (escaped once for every statement). */
static int start(struct mysql_sm *m, enum mysql_sm_op op, const char *key)
{
    m->op = op;
    m->err = (struct lab_err){0};
    if (strcmp(key, m->key) == 0 && m->key[0])
        return 0;
    if (strlen(key) >= sizeof m->key || quote(key, m->q, sizeof m->q) != 0) {
        lab_err_set(&m->err, ENAMETOOLONG, "lock key '%.40s...' is too long", key);
        m->key[0] = '\0';
        return -1;
    }
    snprintf(m->key, sizeof m->key, "%s", key);
    return 0;
}

enum mysql_sm_act mysql_sm_open(struct mysql_sm *m, int64_t now)
{
    (void)now;
    m->op = MSM_OP_OPEN;
    m->step = MSM_IDLE;
    return MYSQL_SM_CONNECT;
}

enum mysql_sm_act mysql_sm_acquire(struct mysql_sm *m, const char *key, int64_t wait_ns,
                                   int64_t now)
{
    if (start(m, MSM_OP_ACQUIRE, key) != 0)
        return failed(m);
    m->attempt = 0;
    m->deadline = now + wait_ns;
    return attempt(m, now);
}

enum mysql_sm_act mysql_sm_release(struct mysql_sm *m, const char *key, int64_t now)
{
    if (start(m, MSM_OP_RELEASE, key) != 0)
        return failed(m);
    if (m->kind == MYSQL_SM_FOR_UPDATE && (!m->in_txn || !m->connected)) {
        /* the connection broke since the grant: the server rolled the
         * transaction back and the row was free from then on */
        lab_err_set(&m->err, ECONNRESET, "the transaction holding the row was lost");
        m->in_txn = false;
        return released(m, RELEASE_NOT_OWNER);
    }
    m->in_txn = false; /* committed, or nothing to commit */
    if (m->kind == MYSQL_SM_OPTIMISTIC && m->stock <= 0)
        return released(m, RELEASE_OK); /* sold out at the read: nothing to write */
    return send_step(m, release_step[m->kind], now);
}

enum mysql_sm_act mysql_sm_connected(struct mysql_sm *m, bool ok, const struct lab_err *err,
                                     int64_t now)
{
    m->in_txn = false; /* a new session has no transaction */
    if (!ok) {
        if (err)
            m->err = *err;
        return failed(m);
    }
    m->connected = true;
    if (m->op == MSM_OP_OPEN) {
        m->open_rc = 0;
        return done(m);
    }
    return send_step(m, m->step, now);
}

enum mysql_sm_act mysql_sm_result(struct mysql_sm *m, const struct mysql_sm_result *r,
                                  int64_t now)
{
    if (m->op == MSM_OP_NONE)
        return MYSQL_SM_DONE; /* no statement of ours in flight: nothing it could answer */
    if (!r->err.code || m->step == MSM_ROLLBACK)
        return on_answer(m, r, now);
    m->err = r->err;
    return on_error(m, now);
}

enum mysql_sm_act mysql_sm_lost(struct mysql_sm *m, const struct lab_err *err, int64_t now)
{
    (void)now;
    m->connected = false;
    m->in_txn = false; /* the server rolls the transaction back */
    if (m->op == MSM_OP_NONE)
        return MYSQL_SM_DONE;
    if (m->step == MSM_ROLLBACK)
        return rolled_back(m);
    if (err)
        m->err = *err;
    return failed(m);
}

enum mysql_sm_act mysql_sm_abandoned(struct mysql_sm *m, int64_t now)
{
    (void)now;
    m->connected = false;
    m->in_txn = false;
    if (m->op != MSM_OP_ACQUIRE) /* only an acquire's statements wait in the server */
        return MYSQL_SM_DONE;
    return acquired(m, LOCK_TIMEOUT);
}

enum mysql_sm_act mysql_sm_timer(struct mysql_sm *m, int64_t now)
{
    if (m->op != MSM_OP_ACQUIRE)
        return MYSQL_SM_DONE;
    if (*m->env->stop)
        return acquired(m, LOCK_TIMEOUT);
    return attempt(m, now);
}
