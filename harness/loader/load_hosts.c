/*
 * load_hosts.c - hosts: where a scenario's clients and servers run
 * (host_spec.h; the run makes each host a network namespace of its own:
 * harness/net/).
 *
 *   hosts:
 *     h1: [redis-master, client:0]
 *     h2: [redis-replica:0, sentinel:0, client:1]
 *
 * A host's name is lower-case letters, digits and '-', and names no
 * client or server; a member is client:N (N below the largest client
 * count) or a server a store lets a scenario place (backend_role_name's
 * place: the role it has when the run starts), each on one host at most.
 * Read after clients (OPT_LATE), so N is checked against them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "backend.h"
#include "load_sections.h"
#include "opt_engine.h"

/* Is text a host name: [a-z0-9-], a letter first, shorter than SCN_HOST_NAME? */
static bool host_name_ok(const char *text, size_t len)
{
    if (len == 0 || len >= SCN_HOST_NAME || text[0] < 'a' || text[0] > 'z')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((text[i] >= 'a' && text[i] <= 'z') || (text[i] >= '0' && text[i] <= '9') ||
              text[i] == '-'))
            return false;
    return true;
}

int scenario_most_clients(const struct scenario *s)
{
    int most = s->n_client_steps == 0 ? 1 : s->clients; /* no clients key: one */
    for (int i = 0; i < s->n_client_steps; i++)
        if (s->client_steps[i] > most)
            most = s->client_steps[i];
    return most;
}

/* Is member a valid one: 0, or -1 with what is wrong in why. */
static int member_ok(const struct scenario *s, const char *m, char *why, size_t n)
{
    if (strncmp(m, "client:", 7) == 0) {
        char *end;
        long i = strtol(m + 7, &end, 10);
        if (end == m + 7 || *end || i < 0 || i >= scenario_most_clients(s)) {
            snprintf(why, n, "client:N with N from 0 to %d (clients)", scenario_most_clients(s) - 1);
            return -1;
        }
        return 0;
    }
    const char *colon = strchr(m, ':');
    size_t len = colon ? (size_t)(colon - m) : strlen(m);
    const struct backend_role_name *r = backend_role_find(m, len);
    if (!r || !r->place || (colon && r->indexed == 0) || (!colon && r->indexed == 2)) {
        snprintf(why, n, "client:N, or a server to place: %s", backend_place_list());
        return -1;
    }
    int count = colon ? backend_place_count(s, r) : 0;
    char *end;
    long i = colon ? strtol(colon + 1, &end, 10) : 0;
    if (colon && (end == colon + 1 || *end || i < 0 || (count > 0 && i >= count))) {
        if (count > 0)
            snprintf(why, n, "%.*s:I with I from 0 to %d, as backends: starts them", (int)len,
                     m, count - 1);
        else
            snprintf(why, n, "%.*s:I with I a number from 0", (int)len, m);
        return -1;
    }
    return 0;
}

/* Is member already on a host before h (or earlier on h itself, k)? */
static bool placed_before(const struct scenario *s, int h, int k, const char *m)
{
    for (int i = 0; i <= h; i++)
        for (int j = 0; j < (i == h ? k : s->hosts[i].n_members); j++)
            if (strcmp(s->hosts[i].members[j], m) == 0)
                return true;
    return false;
}

static int load_host(struct opt_loader *L, const yaml_node_t *key, const yaml_node_t *val,
                     const char *keypath)
{
    struct scenario *s = L->s;
    char shown[SHOW_MAX], kp[96], why[256];
    if (key->type != YAML_SCALAR_NODE || !host_name_ok(scalar_text(key), key->data.scalar.length))
        return fail_at(L, key, "%s: a host's name is lower-case letters, digits and '-', a "
                               "letter first, at most %d characters", keypath, SCN_HOST_NAME - 1);
    const char *name = scalar_text(key);
    if (strncmp(name, "client", 6) == 0 || backend_role_find(name, strlen(name)) ||
        strcmp(name, "lab") == 0)
        return fail_at(L, key, "%s: host name '%s' is a client's, a server's or locklab's own "
                               "(lab): choose another", keypath, name);
    for (int h = 0; h < s->n_hosts; h++)
        if (strcmp(s->hosts[h].name, name) == 0)
            return fail_at(L, key, "%s: host '%s' is declared twice", keypath, name);
    if (s->n_hosts == SCN_MAX_HOSTS)
        return fail_at(L, key, "%s: at most %d hosts", keypath, SCN_MAX_HOSTS);
    snprintf(kp, sizeof kp, "%s.%s", keypath, name);
    if (val->type != YAML_SEQUENCE_NODE)
        return wrong_type(L, val, kp, "a list of what runs there, such as [redis-master, "
                                      "client:0]");
    struct scenario_host *host = &s->hosts[s->n_hosts];
    memset(host, 0, sizeof *host);
    snprintf(host->name, sizeof host->name, "%s", name);
    for (yaml_node_item_t *it = val->data.sequence.items.start; it < val->data.sequence.items.top;
         it++) {
        const yaml_node_t *m = node_at(L, *it);
        if (want_scalar(L, m, kp, "client:N or a server") != 0)
            return -1;
        const char *text = scalar_text(m);
        if (m->data.scalar.length >= sizeof host->members[0] ||
            member_ok(s, text, why, sizeof why) != 0)
            return fail_at(L, m, "%s: unknown member '%s' (valid: %s)", kp,
                           show(shown, sizeof shown, text, m->data.scalar.length), why);
        if (placed_before(s, s->n_hosts, host->n_members, text))
            return fail_at(L, m, "%s: '%s' is on another host already", kp, text);
        if (host->n_members == SCN_HOST_MEMBERS)
            return fail_at(L, m, "%s: at most %d members", kp, SCN_HOST_MEMBERS);
        snprintf(host->members[host->n_members++], sizeof host->members[0], "%s", text);
    }
    s->n_hosts++;
    return 0;
}

int load_hosts(struct opt_loader *L, const yaml_node_t *value, const char *keypath)
{
    if (value->type != YAML_MAPPING_NODE)
        return wrong_type(L, value, keypath, "a mapping of host names to what runs there");
    L->s->n_hosts = 0;
    int rc = 0;
    for (yaml_node_pair_t *p = value->data.mapping.pairs.start; p < value->data.mapping.pairs.top;
         p++)
        if (load_host(L, node_at(L, p->key), node_at(L, p->value), keypath) != 0)
            rc = -1;
    return rc;
}
