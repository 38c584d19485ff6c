/*
 * servers_etcd.c - embedded etcd clusters (see servers_etcd.h).
 *
 * Each member is Debian's `etcd` (3.4) in its own directory under
 * locklab's temporary directory: a free client port and a free peer port
 * on 127.0.0.1, the data in <dir>/data, --unsafe-no-fsync (the disk's
 * fsync is noise here, not what a lock design does), and a heartbeat of
 * 50 ms with an election timeout of 500 ms, so that an election after a
 * leader is killed takes 0.5 to 1 s and the smallest lease etcd
 * grants is 1 s (it raises a lease to 1.5 election timeouts). The member's
 * name, peer port and the initial cluster are kept in srv->extra, so a
 * restart fault starts it again on the same ports and data, rejoining its
 * cluster. Ready is a leader named by every member and /health true on
 * each. etcd keeps nothing locklab needs after a run: members are stopped
 * with SIGKILL.
 */
#include "servers_etcd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_conn.h"

#define ETCD_START_TIMEOUT_MS 30000
#define ETCD_MAX_MEMBERS 3

static const char *etcd_binary(void)
{
    const char *e = getenv("LOCKLAB_ETCD_BIN");
    return e && *e ? e : "etcd";
}

/* Start member s from what srv->extra keeps: "NAME PEERPORT CLUSTER". */
static int spawn_etcd(struct server *s, struct lab_err *err)
{
    char name[16], cluster[160], data[600], client[96], peer[96];
    int peer_port;
    if (sscanf(s->extra, "%15s %d %159s", name, &peer_port, cluster) != 3) {
        lab_err_set(err, EINVAL, "etcd member without its settings");
        return -1;
    }
    snprintf(data, sizeof data, "%s/data", s->dir);
    snprintf(client, sizeof client, "http://%s:%d", s->host, s->port);
    snprintf(peer, sizeof peer, "http://%s:%d", s->host, peer_port);
    char *const argv[] = {(char *)etcd_binary(), "--name", name, "--data-dir", data,
                          "--listen-client-urls", client, "--advertise-client-urls", client,
                          "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                          "--initial-cluster", cluster, "--initial-cluster-state", "new",
                          "--initial-cluster-token", "locklab", "--unsafe-no-fsync",
                          "--heartbeat-interval", "50", "--election-timeout", "500",
                          "--logger", "zap", "--log-level", "warn", NULL};
    return servers_spawn(s, "etcd.log", argv, err);
}

/* A uint64 the gateway writes as a string (member ids use all 64 bits). */
static uint64_t u64_field(const json_t *obj, const char *key)
{
    const char *v = json_string_value(json_object_get(obj, key));
    return v ? (uint64_t)strtoull(v, NULL, 10) : 0;
}

int servers_etcd_status(struct server *s, uint64_t *id, uint64_t *leader)
{
    char st = s->pid > 0 ? lab_proc_state(s->pid) : 0;
    *id = *leader = 0;
    if (st == 0 || st == 'T' || st == 't' || servers_exited(s))
        return 0; /* a stopped member accepts and never answers: not asked */
    char ep[96];
    struct lab_err err;
    json_t *resp;
    snprintf(ep, sizeof ep, "%s:%d", s->host, s->port);
    struct etcd_conn *c = etcd_conn_new(ep, 300, &err);
    if (!c)
        return 0;
    int rc = etcd_call(c, "/v3/maintenance/status", json_object(), &resp, &err);
    etcd_conn_free(c);
    if (rc != 0)
        return 0;
    *id = u64_field(json_object_get(resp, "header"), "member_id");
    *leader = u64_field(resp, "leader");
    json_decref(resp);
    return 1;
}

/* Every member names the same leader, one of them, and says it is healthy. */
static int cluster_ready(struct server *srv, int n)
{
    uint64_t ids[ETCD_MAX_MEMBERS], leader = 0, l;
    char body[256];
    int is_member = 0;
    for (int i = 0; i < n; i++) {
        if (!servers_etcd_status(&srv[i], &ids[i], &l) || l == 0 || (leader && l != leader))
            return 0;
        leader = l;
        if (etcd_get(srv[i].host, srv[i].port, "/health", 1000, body, sizeof body) != 0 ||
            !strstr(body, "true"))
            return 0;
    }
    for (int i = 0; i < n; i++)
        is_member |= ids[i] == leader;
    return is_member;
}

int servers_etcd_start(struct server *srv, int n, const volatile int *stop, char *endpoints,
                       size_t len, struct lab_err *err)
{
    char cluster[160] = "";
    int peer[ETCD_MAX_MEMBERS];
    if (n < 1 || n > ETCD_MAX_MEMBERS) {
        lab_err_set(err, EINVAL, "an etcd cluster of %d is not supported (1 or 3)", n);
        return -1;
    }
    if (!servers_binary_exists(etcd_binary())) {
        lab_err_set(err, ENOENT, "etcd is not installed (%s): apt-get install etcd-server "
                    "(or `make test`), or point --etcd at a cluster", etcd_binary());
        return -1;
    }
    endpoints[0] = '\0';
    for (int i = 0; i < n; i++) {
        char role[32];
        snprintf(role, sizeof role, "etcd-%d", i + 1);
        servers_reset(&srv[i]); /* its place kept */
        if (servers_prepare(&srv[i], role, err) != 0)
            goto fail;
        srv[i].stop_signal = SIGKILL;
        peer[i] = servers_free_port();
        size_t used = strlen(cluster), e = strlen(endpoints);
        snprintf(cluster + used, sizeof cluster - used, "%sm%d=http://%s:%d", i ? "," : "", i,
                 srv[i].host, peer[i]);
        snprintf(endpoints + e, len - e, "%s%s:%d", i ? "," : "", srv[i].host, srv[i].port);
    }
    for (int i = 0; i < n; i++) {
        snprintf(srv[i].extra, sizeof srv[i].extra, "m%d %d %s", i, peer[i], cluster);
        if (spawn_etcd(&srv[i], err) != 0)
            goto fail;
        srv[i].respawn = spawn_etcd; /* rejoins from its data: the election is health's */
    }
    int64_t deadline = lab_now_ns() + (int64_t)ETCD_START_TIMEOUT_MS * 1000000;
    while (lab_now_ns() < deadline && !(stop && *stop)) {
        for (int i = 0; i < n; i++)
            if (servers_exited(&srv[i])) {
                lab_err_set(err, ECHILD, "etcd exited during start-up (see %s/etcd.log)",
                            srv[i].dir);
                goto fail;
            }
        if (cluster_ready(srv, n))
            return 0;
        lab_sleep_ns(20 * 1000000, NULL);
    }
    if (stop && *stop)
        lab_err_set(err, EINTR, "interrupted while etcd was starting");
    else
        lab_err_set(err, ETIMEDOUT, "etcd cluster %s elected no leader within %d s", endpoints,
                    ETCD_START_TIMEOUT_MS / 1000);
fail:
    for (int i = 0; i < n; i++)
        servers_stop(&srv[i]);
    return -1;
}

int servers_etcd_metric(const char *endpoints, const char *metric, int64_t *sum,
                        struct lab_err *err)
{
    static char page[1 << 18]; /* /metrics of etcd 3.4: about 100 KB */
    char list[256], host[64];
    int port;
    size_t mlen = strlen(metric);
    *sum = 0;
    snprintf(list, sizeof list, "%s", endpoints);
    for (char *save, *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (lab_parse_hostport(p, host, sizeof host, &port) != 0 ||
            etcd_get(host, port, "/metrics", 2000, page, sizeof page) != 0) {
            lab_err_set(err, EIO, "etcd at %s did not answer /metrics", p);
            return -1;
        }
        for (char *line = page, *next; line && *line; line = next) {
            char *eol = strchr(line, '\n');
            next = eol ? eol + 1 : NULL;
            if (strncmp(line, metric, mlen) != 0 || (line[mlen] != ' ' && line[mlen] != '{'))
                continue;
            char *value = strchr(line + mlen, ' '); /* after the labels, if any */
            if (value && (!eol || value < eol))
                *sum += (int64_t)strtod(value + 1, NULL);
        }
    }
    return 0;
}

int servers_etcd_clear(const char *endpoints, char (*keys)[160], int n, struct lab_err *err)
{
    struct etcd_conn *c = etcd_conn_new(endpoints, 5000, err);
    json_t *resp;
    char full[200];
    if (!c)
        return -1;
    int rc = 0;
    for (int i = 0; rc == 0 && i < n; i++) {
        snprintf(full, sizeof full, ETCD_KEY_PREFIX "%s", keys[i]);
        rc = etcd_call(c, "/v3/kv/deleterange", json_pack("{s:o}", "key", etcd_b64s(full)),
                       &resp, err);
        json_decref(resp);
        if (rc != 0)
            break;
        strncat(full, "/", sizeof full - strlen(full) - 1);
        rc = etcd_call(c, "/v3/kv/deleterange",
                       json_pack("{s:o, s:o}", "key", etcd_b64s(full), "range_end",
                                 etcd_prefix_end(full)),
                       &resp, err);
        json_decref(resp);
    }
    etcd_conn_free(c);
    return rc;
}

int servers_etcd_ping(const char *endpoints, struct lab_err *err)
{
    struct etcd_conn *c = etcd_conn_new(endpoints, 5000, err);
    json_t *resp = NULL;
    if (!c)
        return -1;
    int rc = etcd_call(c, "/v3/maintenance/status", json_object(), &resp, err);
    if (rc == 0 && !json_object_get(resp, "leader")) {
        lab_err_set(err, EIO, "etcd %s has no leader", endpoints);
        rc = -1;
    }
    json_decref(resp);
    etcd_conn_free(c);
    return rc;
}

int servers_etcd_version(char *out, size_t outlen)
{
    char *argv[] = {(char *)etcd_binary(), "--version", NULL};
    char ver[128];
    if (servers_version(argv, ver, sizeof ver) != 0)
        return -1;
    snprintf(out, outlen, "%s", ver); /* "etcd Version: 3.4.23" */
    return 0;
}
