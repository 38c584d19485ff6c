/*
 * net_cut.c - cuts between the hosts of a run and the probes that show
 * them (see net.h).
 *
 * A cut is one nftables table, `inet locklab`, in the namespace of each
 * host that must not receive what the other side sends: an input rule on
 * the senders' addresses, drop (silence: a connect hangs, a request is
 * never answered) or reject (a TCP reset back at once, an ICMP error
 * otherwise). Only input is filtered, on the receiving side: a drop on
 * the sender's output would fail its connect at once (EPERM), which is no
 * silence; a two-way cut is a rule on each side, a one-way cut one on the
 * receiving side alone (its resets and answers still go back). A reject
 * lets the other side's resets in: in a two-way cut they are the answers
 * of its own reject rule, without which a reject would be as silent as a
 * drop. Healing
 * deletes the table. The rules
 * live and die with the hosts' namespaces: nothing of them is ever in
 * locklab's own.
 * The probes that show a cut are net_probe.c's.
 */
#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "servers.h"

enum net_probe net_probe(int from, int to, int timeout_ms, int64_t *took_ns)
{
    return net_probe_at(net_host_pid(from), net_host_addr(to), timeout_ms, took_ns);
}

const char *net_mask_names(unsigned m, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int h = 0; h < net_host_count() && u < n; h++)
        if (m & (1u << h)) {
            int w = snprintf(buf + u, n - u, "%s%s", u ? "," : "", net_host_name(h));
            u += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

/* Run `nft -f -` with rules in host h; 0 or -1 with err filled. */
static int nft(int h, const char *rules, struct lab_err *err)
{
    char *const argv[] = {"nft", "-f", "-", NULL};
    return net_run(h, argv, rules, "nftables", err);
}

int net_cut(unsigned from, unsigned to, bool reject, unsigned *ruled, struct lab_err *err)
{
    char set[SCN_MAX_HOSTS * 18] = "";
    size_t u = 0;
    for (int h = 0; h < net_host_count(); h++)
        if (from & (1u << h))
            u += (size_t)snprintf(set + u, sizeof set - u, "%s%s", u ? ", " : "",
                                  net_host_addr(h));
    char rules[1024];
    if (reject)
        snprintf(rules, sizeof rules,
                 "table inet locklab {\n chain in {\n"
                 "  type filter hook input priority 0; policy accept;\n"
                 "  ip saddr { %s } tcp flags rst accept\n"
                 "  ip saddr { %s } meta l4proto tcp reject with tcp reset\n"
                 "  ip saddr { %s } reject\n }\n}\n", set, set, set);
    else
        snprintf(rules, sizeof rules,
                 "table inet locklab {\n chain in {\n"
                 "  type filter hook input priority 0; policy accept;\n"
                 "  ip saddr { %s } drop\n }\n}\n", set);
    for (int h = 0; h < net_host_count(); h++) {
        if (!(to & (1u << h)))
            continue;
        if (nft(h, rules, err) != 0)
            return -1;
        *ruled |= 1u << h;
    }
    return 0;
}

int net_heal(unsigned ruled, struct lab_err *err)
{
    int rc = 0;
    for (int h = 0; h < net_host_count(); h++)
        if ((ruled & (1u << h)) && nft(h, "delete table inet locklab\n", err) != 0)
            rc = -1;
    return rc;
}
