/*
 * fault_actions.c - the table of fault actions (see fault_action.h): the
 * explicit list of every action's row, in the order the loader lists the
 * words. Each row lives beside its hooks, in the file of what it does;
 * adding an action is its row there and one line here.
 */
#include "fault_action.h"

#include <stdio.h>
#include <string.h>

extern const struct fault_action_ops fault_pause, fault_kill, fault_restart, fault_stop,
    fault_start, fault_sleep, fault_failover, fault_clock_jump, fault_partition, fault_delay;

const struct fault_action_ops *const fault_actions[] = {
    [FAULT_PAUSE] = &fault_pause,
    [FAULT_KILL] = &fault_kill,
    [FAULT_RESTART] = &fault_restart,
    [FAULT_STOP] = &fault_stop,
    [FAULT_START] = &fault_start,
    [FAULT_SLEEP] = &fault_sleep,
    [FAULT_FAILOVER] = &fault_failover,
    [FAULT_CLOCK_JUMP] = &fault_clock_jump,
    [FAULT_PARTITION] = &fault_partition,
    [FAULT_DELAY] = &fault_delay,
};

/* The help of an entry's action key (`locklab list --options`): the
 * words above, the failpoint-only ones last. */
const char fault_actions_help[] =
    "pause, kill, restart, stop, start, failover, clock-jump, partition, delay, sleep (at a failpoint)";

const int fault_actions_count = (int)(sizeof fault_actions / sizeof fault_actions[0]);

const struct fault_action_ops *fault_action_of(enum fault_action a)
{
    return (unsigned)a < (unsigned)fault_actions_count ? fault_actions[a] : NULL;
}

const char *fault_action_name(enum fault_action a)
{
    const struct fault_action_ops *row = fault_action_of(a);
    return row ? row->word : "?";
}

int fault_action_find(const char *word)
{
    for (int i = 0; i < fault_actions_count; i++)
        if (strcmp(fault_actions[i]->word, word) == 0)
            return i;
    return -1;
}

const char *const *fault_action_words(void)
{
    static const char *words[sizeof fault_actions / sizeof fault_actions[0] + 1];
    for (int i = 0; i < fault_actions_count; i++)
        words[i] = fault_actions[i]->word;
    return words;
}

bool fault_action_is(enum fault_action a, unsigned flag)
{
    const struct fault_action_ops *row = fault_action_of(a);
    return row && (row->flags & flag);
}

const char *fault_action_join(char *buf, size_t n, bool (*pick)(const struct fault_action_ops *),
                              const char *last_sep)
{
    int total = 0, k = 0;
    for (int i = 0; i < fault_actions_count; i++)
        total += pick(fault_actions[i]);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < fault_actions_count && used < n; i++) {
        if (!pick(fault_actions[i]))
            continue;
        const char *sep = k == 0 ? "" : k == total - 1 ? last_sep : ", ";
        int w = snprintf(buf + used, n - used, "%s%s", sep, fault_actions[i]->word);
        used += w > 0 ? (size_t)w : 0;
        k++;
    }
    return buf;
}
