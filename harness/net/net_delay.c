/*
 * net_delay.c - slow links (see net.h): the delaying proxy (net_proxy.c)
 * put in the path of every link a scenario's delay entries name, when the
 * hosts come up, and steered by the fault engine while the run goes.
 *
 * nftables can redirect only new connections, and the lab's clients hold
 * theirs for the whole run, so the proxy must be in the path before any
 * server or client starts: right after net_up, net_delay_up forks the
 * proxy (a child with a death signal, like the namespace holders: it dies
 * with locklab, SIGKILL included), has it listen in each host of those
 * links, and adds to each such host's namespace a table `ip
 * locklab_delay` whose output rule sends TCP for the other host to it.
 * The probe port (NET_PROBE_PORT) is left out for the hosts' and the
 * partitions' probes (connecting to a local proxy would always succeed),
 * and taken only by this file's own probes, which a mark tells apart. The
 * delays themselves live in memory shared with the proxy: 0 until a
 * delay fires, its latency and jitter while it lasts, 0 again once healed.
 * The tables go with the hosts' namespaces.
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net_proxy.h"
#include "servers.h"
#include "subproc.h"

static struct {
    volatile pid_t pid;            /* the proxy, 0 when none runs */
    unsigned peers[SCN_MAX_HOSTS]; /* [h]: the hosts h's traffic to goes through it */
    struct net_proxy_shm *shm;
} D;

/* The links the delay entries of scns name: peers[a] |= b and the reverse. */
static bool links_named(struct scenario *const *scns, int n)
{
    bool any = false;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < scns[i]->n_faults; k++) {
            const struct fault_spec *f = &scns[i]->faults[k];
            if (!f->between)
                continue;
            int a = net_host_find(f->groups[0][0]), b = net_host_find(f->groups[1][0]);
            if (a < 0 || b < 0 || a == b)
                continue; /* the loader refused it already */
            D.peers[a] |= 1u << b;
            D.peers[b] |= 1u << a;
            any = true;
        }
    return any;
}

/* Fork the proxy; 0 or -1 with err filled. */
static int proxy_start(struct lab_err *err)
{
    struct net_proxy_conf conf = {.n = net_host_count(), .port = NET_DELAY_PORT, .shm = D.shm};
    for (int h = 0; h < conf.n; h++) {
        inet_pton(AF_INET, net_host_addr(h), &conf.addr[h]);
        conf.ns_fd[h] = -1;
        if (D.peers[h])
            conf.listen |= 1u << h;
    }
    int ready = -1, why = 0;
    pid_t pid = subproc_tied(&ready, &why);
    if (pid == 0) {
        for (int h = 0; h < conf.n; h++) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/ns/net", (int)net_host_pid(h));
            if ((conf.listen & (1u << h)) && (conf.ns_fd[h] = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
                why = errno;
                (void)!write(ready, &why, sizeof why);
                _exit(1);
            }
        }
        net_proxy_main(&conf, ready);
    }
    if (pid < 0) {
        lab_err_set(err, why, "cannot start the delaying proxy: %s", strerror(why));
        return -1;
    }
    D.pid = pid;
    return 0;
}

/* Host h's table: TCP for its peers goes to the proxy. 0 or -1. */
static int redirect(int h, struct lab_err *err)
{
    char set[SCN_MAX_HOSTS * 18] = "", rules[1024];
    size_t u = 0;
    for (int b = 0; b < net_host_count(); b++)
        if (D.peers[h] & (1u << b))
            u += (size_t)snprintf(set + u, sizeof set - u, "%s%s", u ? ", " : "", net_host_addr(b));
    snprintf(rules, sizeof rules,
             "table ip locklab_delay {\n chain out {\n"
             "  type nat hook output priority -100; policy accept;\n"
             "  meta mark 0x%x return\n"
             "  ip daddr { %s } tcp dport %d meta mark != 0x%x return\n"
             "  ip daddr { %s } meta l4proto tcp redirect to :%d\n }\n}\n",
             NET_PROXY_UP_MARK, set, NET_PROBE_PORT, NET_PROXY_PROBE_MARK, set, NET_DELAY_PORT);
    char *const argv[] = {"nft", "-f", "-", NULL};
    return net_run(h, argv, rules, "nftables", err);
}

int net_delay_up(struct scenario *const *scns, int n, struct lab_err *err)
{
    memset(D.peers, 0, sizeof D.peers);
    if (!links_named(scns, n))
        return 0;
    D.shm = mmap(NULL, sizeof *D.shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (D.shm == MAP_FAILED) {
        D.shm = NULL;
        lab_err_set(err, errno, "mmap: %s", strerror(errno));
        return -1;
    }
    memset(D.shm, 0, sizeof *D.shm);
    if (proxy_start(err) != 0)
        return -1;
    for (int h = 0; h < net_host_count(); h++)
        if (D.peers[h] && redirect(h, err) != 0)
            return -1;
    /* each link answers through the proxy before anything runs on it */
    for (int a = 0; a < net_host_count(); a++)
        for (int b = 0; b < net_host_count(); b++) {
            int64_t took;
            if (!(D.peers[a] & (1u << b)) || net_delay_probe(&a, &b, 1, 1, 1000, &took) == 0)
                continue;
            lab_err_set(err, EHOSTUNREACH, "the delaying proxy does not carry %s->%s",
                        net_host_name(a), net_host_name(b));
            return -1;
        }
    return 0;
}

void net_delay_down(void)
{
    if (D.pid > 0) {
        kill(D.pid, SIGKILL);
        waitpid(D.pid, NULL, 0);
    }
    D.pid = 0;
    if (D.shm)
        munmap(D.shm, sizeof *D.shm);
    D.shm = NULL;
    memset(D.peers, 0, sizeof D.peers);
}

bool net_delay_in_path(int a, int b)
{
    return D.pid > 0 && a >= 0 && a < SCN_MAX_HOSTS && (D.peers[a] & (1u << b));
}

void net_delay_set(int from, int to, int64_t latency_ns, int64_t jitter_ns)
{
    if (!net_delay_in_path(from, to))
        return;
    atomic_store(&D.shm->jitter_ns[from][to], jitter_ns);
    atomic_store(&D.shm->latency_ns[from][to], latency_ns);
}

long net_delay_live(void)
{
    return D.shm ? atomic_load(&D.shm->live) : 0;
}

/* ------------------------------------------------------------ probes */

/* In a probing child (in the probing host's namespace): n connections at
 * once to addr's probe port, marked for the proxy; each one's time from
 * its connect to the end of stream that comes back (-1: failed) into t. */
static void probe_many(const char *addr, int n, int timeout_ms, int64_t *t)
{
    struct pollfd p[NET_DELAY_PROBES_MAX];
    int64_t t0[NET_DELAY_PROBES_MAX];
    unsigned mark = NET_PROXY_PROBE_MARK;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NET_PROBE_PORT)};
    inet_pton(AF_INET, addr, &a.sin_addr);
    for (int i = 0; i < n; i++) {
        t[i] = -1;
        t0[i] = lab_now_ns();
        p[i] = (struct pollfd){.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0),
                               .events = POLLIN};
        if (p[i].fd < 0 || setsockopt(p[i].fd, SOL_SOCKET, SO_MARK, &mark, sizeof mark) != 0 ||
            (connect(p[i].fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS)) {
            if (p[i].fd >= 0)
                close(p[i].fd);
            p[i].fd = -1;
        }
    }
    int64_t end = lab_now_ns() + (int64_t)timeout_ms * 1000000;
    for (int left = n; left > 0;) {
        int64_t now = lab_now_ns();
        left = 0;
        for (int i = 0; i < n; i++)
            left += p[i].fd >= 0;
        if (!left || now >= end || poll(p, (nfds_t)n, (int)((end - now) / 1000000) + 1) < 0)
            break;
        for (int i = 0; i < n; i++) {
            char c;
            if (p[i].fd < 0 || !p[i].revents)
                continue;
            ssize_t r = recv(p[i].fd, &c, 1, 0);
            if (r < 0 && (errno == EAGAIN || errno == ENOTCONN))
                continue;
            if (r == 0)
                t[i] = lab_now_ns() - t0[i];
            close(p[i].fd);
            p[i].fd = -1;
        }
    }
    for (int i = 0; i < n; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int net_delay_probe(const int *from, const int *to, int k, int n, int timeout_ms, int64_t *p50)
{
    pid_t pids[SCN_MAX_HOSTS * SCN_MAX_HOSTS];
    int fds[SCN_MAX_HOSTS * SCN_MAX_HOSTS];
    if (n > NET_DELAY_PROBES_MAX)
        n = NET_DELAY_PROBES_MAX;
    if (k > SCN_MAX_HOSTS * SCN_MAX_HOSTS)
        k = SCN_MAX_HOSTS * SCN_MAX_HOSTS;
    for (int j = 0; j < k; j++) { /* every pair at once: one child each */
        int p[2];
        pids[j] = -1;
        fds[j] = -1;
        if (pipe2(p, O_CLOEXEC) != 0)
            continue;
        pid_t parent = getpid();
        pids[j] = fork();
        if (pids[j] == 0) {
            int64_t t[NET_DELAY_PROBES_MAX];
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent || servers_enter_netns(net_host_pid(from[j])) != 0)
                _exit(1);
            probe_many(net_host_addr(to[j]), n, timeout_ms, t);
            (void)!write(p[1], t, (size_t)n * sizeof t[0]);
            _exit(0);
        }
        close(p[1]);
        fds[j] = pids[j] > 0 ? p[0] : (close(p[0]), -1);
    }
    int rc = 0;
    for (int j = 0; j < k; j++) {
        int64_t t[NET_DELAY_PROBES_MAX];
        ssize_t got = fds[j] >= 0 ? read(fds[j], t, (size_t)n * sizeof t[0]) : -1;
        if (fds[j] >= 0)
            close(fds[j]);
        if (pids[j] > 0)
            waitpid(pids[j], NULL, 0);
        bool ok = got == (ssize_t)((size_t)n * sizeof t[0]);
        for (int i = 0; ok && i < n; i++)
            ok = t[i] >= 0;
        if (!ok) {
            p50[j] = -1;
            rc = -1;
            continue;
        }
        qsort(t, (size_t)n, sizeof t[0], by_value);
        p50[j] = t[n / 2];
    }
    return rc;
}
