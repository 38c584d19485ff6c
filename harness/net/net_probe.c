/*
 * net_probe.c - a probe across the run's network (see net.h): a TCP
 * connect from a child that joined the probing host's namespace to another
 * host's probe listener, so it meets the network as that host's clients
 * do: connected, refused (a reject cut, a reset), or no answer (a drop).
 * The hosts use it to see each other up, the cuts to show they landed and
 * healed.
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "servers.h"

const char *net_probe_word(enum net_probe p)
{
    switch (p) {
    case NET_PROBE_OK: return "connected";
    case NET_PROBE_REFUSED: return "refused";
    case NET_PROBE_SILENT: return "no answer";
    default: return "could not probe";
    }
}

/* In the probing child: connect to addr's probe port within timeout_ms. */
static enum net_probe connect_once(const char *addr, int timeout_ms)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(NET_PROBE_PORT)};
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1)
        return NET_PROBE_ERROR;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return NET_PROBE_ERROR;
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc != 0 && errno != EINPROGRESS)
        return errno == ECONNREFUSED || errno == ECONNRESET ? NET_PROBE_REFUSED
               : errno == EPERM                              ? NET_PROBE_REFUSED /* rejected */
                                                             : NET_PROBE_ERROR;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (rc != 0 && poll(&p, 1, timeout_ms) != 1)
        return NET_PROBE_SILENT;
    int e = 0;
    socklen_t len = sizeof e;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
    close(fd);
    if (e == 0)
        return NET_PROBE_OK;
    return e == ECONNREFUSED || e == ECONNRESET || e == EHOSTUNREACH ? NET_PROBE_REFUSED
           : e == ETIMEDOUT                                          ? NET_PROBE_SILENT
                                                                     : NET_PROBE_ERROR;
}

enum net_probe net_probe_at(pid_t ns, const char *addr, int timeout_ms, int64_t *took_ns)
{
    int64_t t0 = lab_now_ns();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent || (ns > 0 && servers_enter_netns(ns) != 0))
            _exit(NET_PROBE_ERROR);
        _exit(connect_once(addr, timeout_ms));
    }
    int st = 0;
    bool ok = pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st);
    *took_ns = lab_now_ns() - t0;
    return ok ? (enum net_probe)WEXITSTATUS(st) : NET_PROBE_ERROR;
}
