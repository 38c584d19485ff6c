/*
 * backend.c - the registry of store tables (see backend.h): the one place
 * where a backend's name is compared, and where the stores' role names and
 * adapter words are looked up. A new store is one folder (harness/stores/<store>/) with its
 * table and one line here.
 */
#include "backend.h"

#include "scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The stores, in the order results compare them: each X(name) is the
 * table backend_<name> of one folder harness/stores/<store>/. A new store
 * is one more X() on this line. */
#define BACKEND_STORES(X) X(redis) X(zookeeper) X(etcd) X(mysql) X(postgres)

#define BACKEND_DECLARE(name) extern const struct backend_ops backend_##name;
#define BACKEND_ENTRY(name) &backend_##name,
BACKEND_STORES(BACKEND_DECLARE)
const struct backend_ops *const backend_registry[] = {BACKEND_STORES(BACKEND_ENTRY)};
_Static_assert(sizeof backend_registry / sizeof backend_registry[0] <= BACKEND_MAX,
               "raise BACKEND_MAX");
const int backend_count = (int)(sizeof backend_registry / sizeof backend_registry[0]);

const struct backend_ops *backend_find(const char *name)
{
    for (int i = 0; i < backend_count; i++)
        if (strcmp(name, backend_registry[i]->name) == 0)
            return backend_registry[i];
    return NULL;
}

const struct backend_ops *backend_of(const struct lock_ops *ops)
{
    return backend_find(ops->backend);
}

const struct backend_ops *backend_stock(void)
{
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i]->start_stock)
            return backend_registry[i];
    return NULL;
}

int backend_conn_limit(const struct lock_ops *ops, int clients, bool external, char *why,
                       size_t whylen)
{
    const struct backend_ops *be = ops ? backend_of(ops) : NULL;
    if (!be || external || !be->max_connections || clients <= be->max_connections)
        return 0;
    snprintf(why, whylen, "%s as the lab starts it takes at most %d connections (%s), one "
             "a client", be->title, be->max_connections, be->max_connections_why);
    return be->max_connections;
}

int backend_index(const struct backend_ops *be)
{
    for (int i = 0; i < backend_count; i++)
        if (backend_registry[i] == be)
            return i;
    return -1;
}

int backend_check_hostport(const char *addr, const char *what, struct lab_err *err)
{
    char host[64];
    int port;
    if (lab_parse_hostport(addr, host, sizeof host, &port) == 0)
        return 0;
    lab_err_set(err, EINVAL, "bad %s address '%s' (expected HOST:PORT)", what, addr);
    return -1;
}

static size_t store_size(int i)
{
    return backend_registry[i]->settings_size;
}

size_t backend_settings_offset(int i)
{
    return scenario_blob_offset(store_size, i);
}

const void *backend_settings(const struct scenario *s, const struct backend_ops *be)
{
    int i = backend_index(be);

    if (i < 0 || !be->settings ||
        backend_settings_offset(i + 1) > sizeof s->store_settings)
        return NULL;
    return s->store_settings + backend_settings_offset(i);
}

const struct backend_role_name *backend_role_find(const char *name, size_t len)
{
    for (int i = 0; i < backend_count; i++)
        for (const struct backend_role_name *r = backend_registry[i]->role_names; r && r->name;
             r++)
            if (strlen(r->name) == len && strncmp(name, r->name, len) == 0)
                return r;
    return NULL;
}

int backend_place_count(const struct scenario *s, const struct backend_role_name *r)
{
    for (int i = 0; i < backend_count; i++) {
        const struct backend_ops *be = backend_registry[i];
        for (const struct backend_role_name *q = be->role_names; q && q->name; q++)
            if (q == r)
                return be->place_count ? be->place_count(s, r) : 0;
    }
    return 0;
}

/* Every store's role names (only those hosts: may place: place_only)
 * into list, once. */
static const char *role_list(char *list, size_t n, bool place_only)
{
    if (list[0])
        return list;
    for (int i = 0; i < backend_count; i++)
        for (const struct backend_role_name *r = backend_registry[i]->role_names; r && r->name;
             r++) {
            size_t len = strlen(list);
            if (!place_only || r->place)
                snprintf(list + len, n - len, "%s%s%s", len ? ", " : "", r->name,
                         r->indexed == 2 ? ":I" : r->indexed ? "[:I]" : "");
        }
    return list;
}

const char *backend_role_list(void)
{
    static char list[256];
    return role_list(list, sizeof list, false);
}

const char *backend_place_list(void)
{
    static char list[256];
    return role_list(list, sizeof list, true);
}

int backend_parse_hosts(const char *s, struct lock_servers *sv)
{
    char buf[256];
    struct lock_servers tmp = {0};
    if (strlen(s) >= sizeof buf || !*s || s[strlen(s) - 1] == ',')
        return -1;
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (tmp.n == LOCK_MAX_SERVERS)
            return -1;
        struct lock_endpoint *ep = &tmp.node[tmp.n++];
        if (lab_parse_hostport(p, ep->host, sizeof ep->host, &ep->port) != 0)
            return -1;
    }
    snprintf(tmp.conn, sizeof tmp.conn, "%s", s);
    if (sv)
        *sv = tmp;
    return 0;
}

const struct backend_ops *backend_adapter_find(const char *word,
                                               const struct backend_adapter_kind **kind)
{
    for (int i = 0; i < backend_count; i++)
        for (const struct backend_adapter_kind *k = backend_registry[i]->adapter_kinds;
             k && k->word; k++)
            if (strcmp(k->word, word) == 0) {
                if (kind)
                    *kind = k;
                return backend_registry[i];
            }
    return NULL;
}

const char *backend_adapter_list(void)
{
    static char list[256];
    if (list[0])
        return list;
    for (int i = 0; i < backend_count; i++)
        for (const struct backend_adapter_kind *k = backend_registry[i]->adapter_kinds;
             k && k->word; k++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", k->word);
        }
    return list;
}

int backend_env_put(struct lock_servers *sv, struct lab_err *err, const char *fmt, ...)
{
    size_t used = 0; /* past the entries so far: each NUL-terminated, an empty one ends them */
    while (used < sizeof sv->env && sv->env[used])
        used += strlen(sv->env + used) + 1;
    va_list ap;
    va_start(ap, fmt);
    size_t room = used < sizeof sv->env ? sizeof sv->env - used : 0;
    int w = room ? vsnprintf(sv->env + used, room, fmt, ap) : -1;
    va_end(ap);
    if (w < 0 || (size_t)w + 2 > room) { /* the entry, its NUL and the ending empty one */
        if (room)
            sv->env[used] = '\0';
        lab_err_set(err, E2BIG, "an adapter's environment is too long (at most %zu bytes)",
                    sizeof sv->env);
        return -1;
    }
    sv->env[used + (size_t)w + 1] = '\0';
    return 0;
}

void backend_fill_conn(struct lock_servers *sv)
{
    size_t used = 0;
    sv->conn[0] = '\0';
    for (int i = 0; i < sv->n && used < sizeof sv->conn; i++) {
        int w = snprintf(sv->conn + used, sizeof sv->conn - used, "%s%s:%d", i ? "," : "",
                         sv->node[i].host, sv->node[i].port);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

void backend_health_asked(const struct backend_role *roles, int n, const struct server *must,
                          int need, int (*answers)(const struct server *srv),
                          struct backend_health *out)
{
    const struct server *seen[BACKEND_MAX_ROLES];
    int n_seen = 0, answering = 0;
    bool must_answers = must == NULL;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {
        const struct server *srv = roles[i].srv;
        bool dup = false;
        for (int k = 0; k < n_seen && !dup; k++)
            dup = seen[k] == srv;
        if (dup || n_seen == BACKEND_MAX_ROLES)
            continue; /* a server listed again under a role that moves */
        seen[n_seen++] = srv;
        out->servers++;
        char st = srv->pid > 0 ? lab_proc_state(srv->pid) : 0;
        if (st == 0 || st == 'Z' || st == 'T' || st == 't')
            continue; /* down, or stopped by a fault: not asked, never waited on */
        out->running++;
        if (answers(srv) == 0) {
            answering++;
            must_answers |= srv == must;
        }
    }
    out->available = must_answers && answering >= need && answering > 0;
    out->whole = out->available && answering == out->running;
}
