/*
 * redis_link_block.c - the blocking link (redis_link.h): one hiredis
 * connection to the store, a command at a time, and the conversion of
 * hiredis's replies that every Redis driver feeds its machine.
 */
#include "redis_link.h"

#include <string.h>

#include "redis_common.h"

void redis_sm_from_hiredis(const redisReply *r, struct redis_sm_reply *out)
{
    memset(out, 0, sizeof *out);
    switch (r->type) {
    case REDIS_REPLY_STATUS:
        out->type = RSM_STATUS;
        break;
    case REDIS_REPLY_INTEGER:
        out->type = RSM_INTEGER;
        out->integer = r->integer;
        return;
    case REDIS_REPLY_STRING:
        out->type = RSM_STRING;
        break;
    case REDIS_REPLY_NIL:
        out->type = RSM_NIL;
        return;
    case REDIS_REPLY_ERROR:
        out->type = RSM_ERROR;
        break;
    default:
        out->type = RSM_OTHER;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
            r->element[0]->type == REDIS_REPLY_INTEGER &&
            r->element[1]->type == REDIS_REPLY_INTEGER) {
            out->pair = true;
            out->first = r->element[0]->integer;
            out->second = r->element[1]->integer;
        }
        return;
    }
    out->str = r->str;
    out->len = r->len;
}

void redis_blink_init(struct redis_blink *l, const struct lock_env *env, const char *what)
{
    *l = (struct redis_blink){.env = env, .what = what};
}

static void forget_last(struct redis_blink *l)
{
    if (l->last)
        freeReplyObject(l->last);
    l->last = NULL;
}

bool redis_blink_call(struct redis_blink *l, int argc, const char **argv,
                      struct redis_sm_reply *out, const char **why)
{
    forget_last(l);
    l->last = redisCommandArgv(l->rc, argc, argv, NULL);
    if (!l->last) {
        *why = l->rc->errstr;
        return false;
    }
    redis_sm_from_hiredis(l->last, out);
    return true;
}

bool redis_blink_reconnect(struct redis_blink *l, struct lab_err *err)
{
    forget_last(l);
    if (l->rc)
        redisFree(l->rc);
    l->rc = redis_store_open(l->what, l->env, REDIS_TIMEOUT_MS, err);
    return l->rc != NULL;
}

void redis_blink_close(struct redis_blink *l)
{
    forget_last(l);
    if (l->rc)
        redisFree(l->rc);
    l->rc = NULL;
}
