/*
 * redis_lane.c - one command's way on a Redis connection: its resend,
 * reconnect and reload rules (redis_lane.h).
 */
#include "redis_lane.h"

#include <errno.h>
#include <string.h>

static bool starts(const char *s, const char *word)
{
    return strncmp(s, word, strlen(word)) == 0;
}

void redis_lane_init(struct redis_lane *l)
{
    *l = (struct redis_lane){.broken = true};
}

void redis_lane_op(struct redis_lane *l)
{
    l->reloaded = false;
}

void redis_lane_cmd(struct redis_lane *l)
{
    l->resends = 0;
}

enum redis_lane_next redis_lane_lost(struct redis_lane *l, const char *why,
                                     struct lab_err *err)
{
    l->broken = true;
    lab_err_set(err, EIO, "redis: %s", why && why[0] ? why : "connection lost");
    return l->resends++ == 0 ? REDIS_LANE_RESEND : REDIS_LANE_FAIL;
}

enum redis_lane_next redis_lane_error(struct redis_lane *l, const char *msg, bool script,
                                      struct lab_err *err)
{
    lab_err_set(err, EPROTO, "redis: %s", msg);
    if (script && starts(msg, "NOSCRIPT") && !l->reloaded) {
        l->reloaded = true; /* lost again at once is an error */
        return REDIS_LANE_RELOAD;
    }
    if (!starts(msg, "READONLY") && !starts(msg, "NOREPLICAS"))
        return REDIS_LANE_FAIL;
    l->broken = true; /* the wrong server: find the master anew, now or next operation */
    return l->resends++ == 0 ? REDIS_LANE_RESEND : REDIS_LANE_FAIL;
}
