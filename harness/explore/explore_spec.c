/*
 * explore_spec.c - the explore: section of a file: which fault actions a
 * schedule draws from, at what, and the ranges of their times, durations
 * and counts. Read strictly, as the loader reads the rest of the file: an
 * unknown key or action, a malformed duration, a range upside down is one
 * line "file:line:column: what is wrong" (with the nearest word when it
 * looks like a typo) and nothing starts.
 *
 * The defaults follow the scenario (explore_spec_resolve): faults happen
 * between a tenth and six tenths of run.max_duration, last from half the
 * lock's TTL to twice the TTL plus the business time (what outlives a
 * lease, and what does not), and a schedule has 1 to 3 entries. Client
 * actions aim at holder or random-client, server actions at the roles of
 * the servers the designs use (the command asks the running stores).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "explore.h"
#include "lex.h"

#define MS 1000000LL

static const char *const section_keys[] = {"actions", "targets", "at", "duration", "faults",
                                           NULL};

struct reader {
    yaml_document_t *doc;
    const char *path;
    char *err;
    size_t errlen;
};

static int fail_at(struct reader *R, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(R->err, R->errlen, "%s:%zu:%zu: %s", R->path, n->start_mark.line + 1,
             n->start_mark.column + 1, msg);
    return -1;
}

static const char *text_of(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

static const char *hint(char *buf, size_t n, const char *word, const char *const *words)
{
    const char *near = lex_nearest(word, strlen(word), words, 0);
    if (near)
        snprintf(buf, n, "; did you mean '%s'?", near);
    else
        buf[0] = '\0';
    return buf;
}

static void join(char *buf, size_t n, const char *const *words)
{
    buf[0] = '\0';
    for (int i = 0; words[i]; i++) {
        size_t u = strlen(buf);
        snprintf(buf + u, n - u, "%s%s", i ? ", " : "", words[i]);
    }
}

/* The items of v: a sequence's, or v itself when it is one scalar. */
static int items(struct reader *R, const yaml_node_t *v, const yaml_node_t **out, int max,
                 const char *key, const char *what)
{
    if (v->type == YAML_SCALAR_NODE && v->data.scalar.length > 0) {
        out[0] = v;
        return 1;
    }
    if (v->type != YAML_SEQUENCE_NODE)
        return fail_at(R, v, "explore.%s: expected %s", key, what);
    int n = 0;
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        const yaml_node_t *x = yaml_document_get_node(R->doc, *it);
        if (x->type != YAML_SCALAR_NODE)
            return fail_at(R, x, "explore.%s: expected %s", key, what);
        if (n == max)
            return fail_at(R, x, "explore.%s: at most %d", key, max);
        out[n++] = x;
    }
    if (n == 0)
        return fail_at(R, v, "explore.%s: the list is empty; expected %s", key, what);
    return n;
}

static int read_actions(struct reader *R, const yaml_node_t *v, struct explore_spec *sp)
{
    const yaml_node_t *it[XA_COUNT * 2];
    char list[160], near[64];
    join(list, sizeof list, explore_action_words);
    int n = items(R, v, it, XA_COUNT * 2, "actions", "a list of fault actions");
    for (int i = 0; i < n; i++) {
        int a = 0;
        while (a < XA_COUNT && strcmp(explore_action_words[a], text_of(it[i])) != 0)
            a++;
        if (a == XA_COUNT)
            return fail_at(R, it[i], "explore.actions: unknown action '%s' (expected one of: "
                           "%s)%s", text_of(it[i]), list,
                           hint(near, sizeof near, text_of(it[i]), explore_action_words));
        sp->actions |= 1u << a;
    }
    return n < 0 ? -1 : 0;
}

/* holder, random-client, client:N, or a role: name[:N]. */
static bool target_word(const char *t)
{
    size_t i = 0;
    while ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '-')
        i++;
    if (i == 0 || i >= XPL_NAME_MAX - 8)
        return false;
    if (t[i] == '\0')
        return true;
    if (t[i] != ':' || !t[i + 1])
        return false;
    for (i++; t[i]; i++)
        if (t[i] < '0' || t[i] > '9')
            return false;
    return true;
}

static int read_targets(struct reader *R, const yaml_node_t *v, struct explore_spec *sp)
{
    const yaml_node_t *it[XPL_TARGETS_MAX];
    int n = items(R, v, it, XPL_TARGETS_MAX, "targets",
                  "a list of targets (holder, random-client, client:N, server roles)");
    for (int i = 0; i < n; i++) {
        if (!target_word(text_of(it[i])))
            return fail_at(R, it[i], "explore.targets: '%s' is not a target (holder, "
                           "random-client, client:N, or a server role such as redis, "
                           "redis-node:1, zookeeper-leader)", text_of(it[i]));
        snprintf(sp->targets[i], XPL_NAME_MAX, "%s", text_of(it[i]));
        sp->target_line[i] = (int)it[i]->start_mark.line + 1;
        sp->target_column[i] = (int)it[i]->start_mark.column + 1;
    }
    sp->n_targets = n < 0 ? 0 : n;
    return n < 0 ? -1 : 0;
}

/* [min, max] (or one value for both) of durations or counts into out. */
static int read_range(struct reader *R, const yaml_node_t *v, const char *key, bool count,
                      int64_t *out)
{
    const char *what = count ? "[min, max]: entries per schedule, 1 to 8"
                             : "[min, max]: two durations, as [500ms, 3s]";
    const yaml_node_t *it[2];
    int n = items(R, v, it, 2, key, what);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const char *t = text_of(it[i]);
        if (count ? int_scan(t, &out[i]) != 0 || out[i] < 1 || out[i] > XPL_FAULTS_MAX
                  : duration_parse(t, &out[i]) != 0)
            return fail_at(R, it[i], "explore.%s: '%s' is not %s", key, t,
                           count ? "a count from 1 to 8" : "a duration (" DURATION_UNITS_TEXT ")");
        if (!count && out[i] % MS != 0)
            return fail_at(R, it[i], "explore.%s: '%s': give whole milliseconds", key, t);
    }
    if (n == 1)
        out[1] = out[0];
    if (out[0] > out[1])
        return fail_at(R, v, "explore.%s: the range is upside down (min above max)", key);
    if (!count && out[1] == 0)
        return fail_at(R, v, "explore.%s: the range must reach above 0", key);
    return 0;
}

int explore_spec_read(const char *text, size_t len, const char *path, struct explore_spec *sp,
                      char *err, size_t errlen)
{
    yaml_parser_t p;
    yaml_document_t doc;
    struct reader R = {.doc = &doc, .path = path, .err = err, .errlen = errlen};
    memset(sp, 0, sizeof *sp);
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    if (!yaml_parser_load(&p, &doc)) {
        snprintf(err, errlen, "%s:%zu:%zu: YAML syntax error: %s", path,
                 p.problem_mark.line + 1, p.problem_mark.column + 1,
                 p.problem ? p.problem : "unknown problem");
        yaml_parser_delete(&p);
        return -1;
    }
    yaml_parser_delete(&p);
    int rc = -1;
    const yaml_node_t *root = yaml_document_get_root_node(&doc), *sec = NULL, *seckey = NULL;
    for (yaml_node_pair_t *pr = root && root->type == YAML_MAPPING_NODE
                                    ? root->data.mapping.pairs.start : NULL;
         pr && pr < root->data.mapping.pairs.top; pr++) {
        const yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
        if (k->type == YAML_SCALAR_NODE && strcmp(text_of(k), "explore") == 0) {
            seckey = k;
            sec = yaml_document_get_node(&doc, pr->value);
        }
    }
    if (!sec) {
        snprintf(err, errlen, "%s: no explore: section (the fault actions to draw from: "
                 "explore: {actions: [pause, restart]}; docs/explore.md)", path);
        goto out;
    }
    sp->line = (int)seckey->start_mark.line + 1;
    sp->column = (int)seckey->start_mark.column + 1;
    if (sec->type != YAML_MAPPING_NODE) {
        fail_at(&R, sec, "explore: expected a mapping, as {actions: [pause, restart]}");
        goto out;
    }
    const yaml_node_t *actions = NULL;
    for (yaml_node_pair_t *pr = sec->data.mapping.pairs.start; pr < sec->data.mapping.pairs.top;
         pr++) {
        const yaml_node_t *k = yaml_document_get_node(&doc, pr->key);
        const yaml_node_t *v = yaml_document_get_node(&doc, pr->value);
        char list[96], near[64];
        const char *key = k->type == YAML_SCALAR_NODE ? text_of(k) : "";
        int64_t range[2];
        int r;
        if (!strcmp(key, "actions")) {
            actions = v;
            r = read_actions(&R, v, sp);
        } else if (!strcmp(key, "targets")) {
            r = read_targets(&R, v, sp);
        } else if (!strcmp(key, "at") || !strcmp(key, "duration")) {
            r = read_range(&R, v, key, false, range);
            memcpy(!strcmp(key, "at") ? sp->at : sp->duration, range, sizeof range);
        } else if (!strcmp(key, "faults")) {
            r = read_range(&R, v, key, true, range);
            sp->faults[0] = (int)range[0];
            sp->faults[1] = (int)range[1];
        } else {
            join(list, sizeof list, section_keys);
            r = fail_at(&R, k, "explore: unknown key '%s' (expected one of: %s)%s", key, list,
                        hint(near, sizeof near, key, section_keys));
        }
        if (r != 0)
            goto out;
    }
    if (!actions) {
        fail_at(&R, sec, "explore: actions is missing (the fault actions to draw from: %s)",
                "pause, kill, restart, failover, clock-jump, partition, delay");
        goto out;
    }
    rc = 0;
out:
    yaml_document_delete(&doc);
    return rc;
}

static bool is_client(const char *t)
{
    return !strcmp(t, "holder") || !strcmp(t, "random-client") || !strncmp(t, "client:", 7);
}

static int missing(const struct explore_spec *sp, const char *path, char *err, size_t errlen,
                   const char *action, const char *what)
{
    snprintf(err, errlen, "%s:%d:%d: explore: %s has nothing to aim at: %s", path, sp->line,
             sp->column, action, what);
    return -1;
}

#define ADD(arr, cnt, name) \
    do { if ((cnt) < XPL_TARGETS_MAX) snprintf((arr)[(cnt)++], XPL_NAME_MAX, "%s", (name)); } while (0)

int explore_spec_resolve(struct explore_spec *sp, const struct explore_env *env,
                         const char *path, char *err, size_t errlen)
{
    int64_t L = env->ttl_ns, R = env->run_ns;
    sp->lease_ns = L;
    sp->run_ns = R;
    if (sp->at[1] == 0) {
        sp->at[0] = R / 10 / MS * MS;
        sp->at[1] = R * 6 / 10 / MS * MS;
    }
    if (sp->duration[1] == 0) {
        sp->duration[0] = L / 2 / MS * MS;
        sp->duration[1] = (2 * L + env->business_ns) / MS * MS;
        if (sp->duration[1] > R / 2)
            sp->duration[1] = R / 2 / MS * MS;
        if (sp->duration[0] > sp->duration[1])
            sp->duration[0] = sp->duration[1];
        if (sp->duration[0] < MS)
            sp->duration[0] = MS;
    }
    if (sp->faults[1] == 0) {
        sp->faults[0] = 1;
        sp->faults[1] = 3;
    }
    if (sp->at[1] >= R) {
        snprintf(err, errlen, "%s:%d:%d: explore.at: its latest time is not within "
                 "run.max_duration", path, sp->line, sp->column);
        return -1;
    }
    sp->n_client = sp->n_server = sp->n_clock = sp->n_isolate = sp->n_hosts = 0;
    if (sp->n_targets == 0) {
        ADD(sp->client, sp->n_client, "holder");
        ADD(sp->client, sp->n_client, "random-client");
        for (int i = 0; i < env->n_roles; i++)
            ADD(sp->server, sp->n_server, env->roles[i]);
    } else {
        for (int i = 0; i < sp->n_targets; i++) {
            if (is_client(sp->targets[i]))
                ADD(sp->client, sp->n_client, sp->targets[i]);
            else
                ADD(sp->server, sp->n_server, sp->targets[i]);
        }
    }
    for (int i = 0; i < sp->n_server; i++)
        for (int j = 0; j < env->n_roles; j++)
            if (env->role_clock[j] && !strcmp(env->roles[j], sp->server[i]))
                ADD(sp->clock, sp->n_clock, sp->server[i]);
    /* a partition isolates the holder's host or a server's, given hosts: */
    if (env->n_hosts > 0) {
        for (int i = 0; i < sp->n_client; i++)
            if (strcmp(sp->client[i], "random-client") != 0)
                ADD(sp->isolate, sp->n_isolate, sp->client[i]);
        for (int i = 0; i < sp->n_server; i++)
            ADD(sp->isolate, sp->n_isolate, sp->server[i]);
    }
    for (int i = 0; i < env->n_hosts; i++)
        ADD(sp->hosts, sp->n_hosts, env->hosts[i]);
    unsigned a = sp->actions;
    if ((a & (1u << XA_PAUSE)) && sp->n_client + sp->n_server == 0)
        return missing(sp, path, err, errlen, "pause", "no client or server target");
    if ((a & (1u << XA_KILL)) && sp->n_client + sp->n_server == 0)
        return missing(sp, path, err, errlen, "kill", "no client or server target");
    if ((a & (1u << XA_RESTART)) && sp->n_server == 0)
        return missing(sp, path, err, errlen, "restart", "no server target (the designs' "
                       "stores have no embedded server, or targets: names none)");
    if ((a & (1u << XA_CLOCK_JUMP)) && sp->n_clock == 0)
        return missing(sp, path, err, errlen, "clock-jump", "no server whose clock can move "
                       "(a Redis server: redis, redis-node:I)");
    if ((a & (1u << XA_PARTITION)) && sp->n_isolate == 0)
        return missing(sp, path, err, errlen, "partition", "the file has no hosts: "
                       "(docs/scenarios.md#hosts) to cut apart");
    if ((a & (1u << XA_DELAY)) && sp->n_hosts < 2)
        return missing(sp, path, err, errlen, "delay", "a slow link needs two hosts: in the file");
    return 0;
}
