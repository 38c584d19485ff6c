/*
 * net_hosts.c - the hosts of a run (see net.h): a holder process per
 * namespace, the links between them, their addresses, and where each
 * client and server runs.
 *
 * A holder is forked from locklab with a death signal, leaves for a new
 * network namespace (unshare), brings its loopback up and, on a host,
 * accepts connections on the probe port until it is killed. The links
 * are made with iproute2 (`ip -batch -`, run in the namespace it acts on:
 * net_exec), never through a shell and never with `ip netns`, whose named
 * mounts would outlive a SIGKILL of locklab.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "servers.h"
#include "subproc.h"

static struct {
    bool on;
    int n;                                   /* hosts */
    const struct scenario *s;                /* the scenario whose hosts these are */
    char name[SCN_MAX_HOSTS][SCN_HOST_NAME];
    char addr[SCN_MAX_HOSTS][20];
    volatile pid_t pid[SCN_MAX_HOSTS];       /* each host's holder */
    volatile pid_t sw;                       /* the switch's holder */
    char lab_addr[20];                       /* locklab's own side */
    char lab_link[IFNAMSIZ];                 /* its veth, in locklab's namespace */
    int64_t setup_ns;
} net;

bool net_on(void) { return net.on; }
int net_host_count(void) { return net.n; }
int64_t net_setup_ns(void) { return net.setup_ns; }

const char *net_host_name(int h)
{
    return h >= 0 && h < net.n ? net.name[h] : "lab";
}

const char *net_host_addr(int h)
{
    return h >= 0 && h < net.n ? net.addr[h] : net.lab_addr;
}

pid_t net_host_pid(int h)
{
    return h >= 0 && h < net.n ? net.pid[h] : h == NET_SWITCH ? net.sw : 0;
}

int net_host_find(const char *name)
{
    for (int h = 0; h < net.n; h++)
        if (strcmp(net.name[h], name) == 0)
            return h;
    return -1;
}

int net_host_of_ns(pid_t ns_pid)
{
    for (int h = 0; ns_pid > 0 && h < net.n; h++)
        if (net.pid[h] == ns_pid)
            return h;
    return NET_LAB;
}

/* The host whose members list member, or NET_LAB. */
static int host_of_member(const char *member)
{
    for (int h = 0; net.on && member[0] && h < net.n; h++)
        for (int m = 0; m < net.s->hosts[h].n_members; m++)
            if (strcmp(net.s->hosts[h].members[m], member) == 0)
                return h;
    return NET_LAB;
}

int net_client_host(int idx)
{
    char member[32];
    snprintf(member, sizeof member, "client:%d", idx);
    return host_of_member(member);
}

int net_enter_client(int idx)
{
    int h = net_client_host(idx);
    return h == NET_LAB ? 0 : servers_enter_netns(net.pid[h]);
}

/* servers_placement: a server's host by the name its store gave it. */
static void place_server(const char *place, char *addr, size_t n, pid_t *ns_pid)
{
    int h = host_of_member(place);
    snprintf(addr, n, "%s", net_host_addr(h));
    *ns_pid = net_host_pid(h);
}

/* ------------------------------------------------------------- holders */

static int loopback_up(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr = {0};
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    int rc = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 ? 0 : -1;
    ifr.ifr_flags |= IFF_UP;
    if (rc == 0)
        rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
    if (fd >= 0)
        close(fd);
    return rc;
}

static int probe_listen(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NET_PROBE_PORT)};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0)
        return -1;
    return fd;
}

/* Fork a holder of a new network namespace; on a host (listen) it accepts
 * probes. Its pid, or -1 with err filled. */
static pid_t holder_start(bool listen_probes, struct lab_err *err)
{
    int ready = -1, why = 0;
    pid_t pid = subproc_tied(&ready, &why);
    if (pid == 0) {
        int fd = -1;
        if (unshare(CLONE_NEWNET) != 0 || loopback_up() != 0 ||
            (listen_probes && (fd = probe_listen()) < 0))
            why = errno ? errno : EIO;
        (void)!write(ready, &why, sizeof why);
        if (why)
            _exit(1);
        for (;;) {
            int c = fd >= 0 ? accept(fd, NULL, NULL) : -1;
            if (c >= 0)
                close(c);
            else if (fd < 0)
                pause();
        }
    }
    if (pid < 0) {
        lab_err_set(err, why, "cannot create a network namespace for a host: %s%s", strerror(why),
                    why == EPERM ? " (hosts need root: CAP_SYS_ADMIN and CAP_NET_ADMIN)" : "");
        return -1;
    }
    return pid;
}

/* ------------------------------------------------------------ tools */

static void find_tool(const char *name, char *out, size_t n)
{
    static const char *const dirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin", NULL};
    if (servers_binary_path(name, out, n) == 0)
        return;
    for (int i = 0; dirs[i]; i++) {
        snprintf(out, n, "%s/%s", dirs[i], name);
        if (access(out, X_OK) == 0)
            return;
    }
    snprintf(out, n, "%s", name);
}

int net_exec(int h, char *const argv[], const char *input, char *out, size_t outlen)
{
    char prog[512];
    find_tool(argv[0], prog, sizeof prog);
    pid_t ns = h == NET_LAB ? 0 : net_host_pid(h);
    int in[2], res[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(res, O_CLOEXEC) != 0) {
        close(in[0]), close(in[1]);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent || (ns > 0 && servers_enter_netns(ns) != 0))
            _exit(126);
        dup2(in[0], 0);
        dup2(res[1], 1);
        dup2(res[1], 2);
        execv(prog, argv);
        _exit(127);
    }
    close(in[0]);
    close(res[1]);
    if (pid > 0 && input)
        (void)!write(in[1], input, strlen(input)); /* a few hundred bytes: fits the pipe */
    close(in[1]);
    size_t used = 0;
    if (outlen)
        out[0] = '\0';
    for (ssize_t k; pid > 0 && (k = read(res[0], out + used, outlen > used + 1 ? outlen - used - 1 : 0)) > 0;)
        used += (size_t)k;
    if (outlen)
        out[used < outlen ? used : outlen - 1] = '\0';
    close(res[0]);
    int st = -1;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}

int net_run(int h, char *const argv[], const char *input, const char *package,
            struct lab_err *err)
{
    char out[512];
    int st = net_exec(h, argv, input, out, sizeof out);
    if (st == 0)
        return 0;
    out[strcspn(out, "\n")] = '\0';
    bool missing = st < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127);
    lab_err_set(err, EIO, "%s in %s: %s%s%s", argv[0],
                h == NET_SWITCH ? "the switch" : net_host_name(h),
                missing ? "did not run (install " : out[0] ? out : "failed",
                missing ? package : "", missing ? ": scripts/install-deps)" : "");
    return -1;
}

/* Run `ip -batch -` with cmds in namespace h; 0 or -1 with err filled. */
static int ip_batch(int h, const char *cmds, struct lab_err *err)
{
    char *const argv[] = {"ip", "-batch", "-", NULL};
    return net_run(h, argv, cmds, "iproute2", err);
}

/* ------------------------------------------------------------ addresses */

/* A /24 of 198.18.0.0/15 that no address of locklab's namespace is in
 * (another run's), starting from one the pid picks; its number 0..511. */
static int pick_subnet(void)
{
    bool used[512] = {false};
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) == 0) {
        for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                continue;
            uint32_t a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
            if ((a >> 17) == (0xC6120000u >> 17)) /* 198.18.0.0/15 */
                used[(a >> 8) & 511] = true;
        }
        freeifaddrs(ifa);
    }
    int start = (int)(getpid() % 512);
    for (int k = 0; k < 512; k++)
        if (!used[(start + k) % 512])
            return (start + k) % 512;
    return -1;
}

/* ------------------------------------------------------------ up, down */

/* The hosts of scns: the first that declares any, checked against the rest. */
static const struct scenario *hosts_of(struct scenario *const *scns, int n, struct lab_err *err)
{
    const struct scenario *first = NULL;
    for (int i = 0; i < n; i++) {
        if (!scns[i]->n_hosts)
            continue;
        if (!first) {
            first = scns[i];
            continue;
        }
        if (scns[i]->n_hosts != first->n_hosts ||
            memcmp(scns[i]->hosts, first->hosts, sizeof first->hosts) != 0) {
            lab_err_set(err, EINVAL, "%s and %s declare different hosts: one run has one "
                        "network (run them apart)", first->path, scns[i]->path);
            return NULL;
        }
    }
    if (!first)
        err->code = 0;
    return first;
}

static int links_up(int k, struct lab_err *err)
{
    char cmds[4096];
    size_t u = 0;
    int a = 18 + k / 256, b = k % 256;
    snprintf(net.lab_addr, sizeof net.lab_addr, "198.%d.%d.1", a & 0xff, b & 0xff);
    snprintf(net.lab_link, sizeof net.lab_link, "locklab%d", (int)(getpid() % 10000000));
    u += (size_t)snprintf(cmds + u, sizeof cmds - u,
                          "link add %s type veth peer name lab netns %d\n"
                          "addr add %s/24 dev %s\nlink set %s up\n",
                          net.lab_link, (int)net.sw, net.lab_addr, net.lab_link, net.lab_link);
    for (int h = 0; h < net.n; h++)
        u += (size_t)snprintf(cmds + u, sizeof cmds - u,
                              "link add h%d netns %d type veth peer name eth0 netns %d\n", h,
                              (int)net.sw, (int)net.pid[h]);
    if (ip_batch(NET_LAB, cmds, err) != 0)
        return -1;
    u = (size_t)snprintf(cmds, sizeof cmds, "link add br0 type bridge\nlink set br0 up\n"
                                            "link set lab master br0\nlink set lab up\n");
    for (int h = 0; h < net.n; h++)
        u += (size_t)snprintf(cmds + u, sizeof cmds - u, "link set h%d master br0\nlink set h%d up\n",
                              h, h);
    if (ip_batch(NET_SWITCH, cmds, err) != 0)
        return -1;
    for (int h = 0; h < net.n; h++) {
        snprintf(net.addr[h], sizeof net.addr[h], "198.%d.%d.%d", a & 0xff, b & 0xff, (10 + h) & 0xff);
        snprintf(cmds, sizeof cmds, "addr add %s/24 dev eth0\nlink set eth0 up\n", net.addr[h]);
        if (ip_batch(h, cmds, err) != 0)
            return -1;
    }
    return 0;
}

int net_up(struct scenario *const *scns, int n, struct lab_err *err)
{
    const struct scenario *s = hosts_of(scns, n, err);
    if (!s)
        return err->code ? -1 : 0;
    int64_t t0 = lab_now_ns();
    memset(&net, 0, sizeof net);
    net.s = s;
    net.n = s->n_hosts;
    for (int h = 0; h < net.n; h++)
        snprintf(net.name[h], sizeof net.name[h], "%s", s->hosts[h].name);
    net.on = true; /* from here net_down undoes what was made */
    int k = pick_subnet();
    if (k < 0) {
        lab_err_set(err, EADDRINUSE, "every /24 of 198.18.0.0/15 is in use here");
        net_down();
        return -1;
    }
    if ((net.sw = holder_start(false, err)) < 0) {
        net.sw = 0;
        net_down();
        return -1;
    }
    for (int h = 0; h < net.n; h++)
        if ((net.pid[h] = holder_start(true, err)) < 0) {
            net.pid[h] = 0;
            net_down();
            return -1;
        }
    if (links_up(k, err) != 0) {
        net_down();
        return -1;
    }
    /* every host answers locklab across the switch before anything runs there */
    for (int h = 0; h < net.n; h++) {
        int64_t took;
        enum net_probe p = NET_PROBE_ERROR;
        for (int tries = 0; tries < 20 && p != NET_PROBE_OK; tries++)
            p = net_probe_at(net_host_pid(NET_LAB), net.addr[h], 500, &took);
        if (p != NET_PROBE_OK) {
            lab_err_set(err, EHOSTUNREACH, "host %s (%s) does not answer locklab: %s",
                        net.name[h], net.addr[h], net_probe_word(p));
            net_down();
            return -1;
        }
    }
    servers_set_placement(place_server);
    net.setup_ns = lab_now_ns() - t0;
    return 0;
}

void net_kill_now(void)
{
    for (int h = 0; h < net.n; h++)
        if (net.pid[h] > 0)
            kill(net.pid[h], SIGKILL);
    if (net.sw > 0)
        kill(net.sw, SIGKILL);
}

void net_down(void)
{
    if (!net.on)
        return;
    servers_set_placement(NULL);
    net_kill_now();
    for (int h = 0; h < net.n; h++)
        if (net.pid[h] > 0)
            waitpid(net.pid[h], NULL, 0);
    if (net.sw > 0)
        waitpid(net.sw, NULL, 0);
    /* the namespaces go once their last process has: the links with them */
    if (net.lab_link[0]) {
        char *const argv[] = {"ip", "link", "del", net.lab_link, NULL};
        char out[256];
        net_exec(NET_LAB, argv, NULL, out, sizeof out); /* gone already, usually */
    }
    memset(&net, 0, sizeof net);
}
