/*
 * net.h - the hosts of a run: network namespaces the run creates itself,
 * joined by its own links, and the cuts between them (network partitions).
 *
 * A scenario's hosts: section (host_spec.h) names hosts and what runs on
 * them. net_up makes each host an anonymous network namespace held by a
 * process of locklab's (it dies with locklab, SIGKILL included: no `ip
 * netns` mount outlives it), plus one more namespace holding a bridge, the
 * switch. Each host has one veth link to the switch; locklab's own
 * namespace has one too, so the harness (the runner, the stock store, the
 * servers no host lists) reaches every host and every host reaches it.
 * Addresses come from the RFC 2544 benchmark range 198.18.0.0/15, one /24
 * per run: locklab's side .1, host i .(10+i). When the holders die the
 * namespaces go, and with them every link (the veth in locklab's
 * namespace is the peer of one in the switch) and every nftables rule
 * (cuts live in the hosts' own namespaces). Without hosts nothing here
 * runs and every server binds 127.0.0.1 as before.
 *
 * A cut (net_cut.c) is an nftables table in the namespace of each host
 * that must not receive what the other side sends: drop (silence) or
 * reject (a TCP reset, at once). A probe is a TCP connect from one host to
 * another's probe listener (its holder accepts on NET_PROBE_PORT).
 */
#ifndef LOCKLAB_NET_H
#define LOCKLAB_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lab.h"
#include "scenario.h"

#define NET_PROBE_PORT 9       /* every host's holder accepts here (discard's port) */
#define NET_LAB -1             /* "host" of locklab's own namespace */

/* Make the hosts the scenarios declare (all that declare hosts must
 * declare the same), and install the servers' placement. 0 (also when
 * none declares any), or -1 with err filled: err->code EINVAL for
 * scenarios that disagree (a usage error), else an environment failure. */
int net_up(struct scenario *const *scns, int n, struct lab_err *err);

/* Kill the holders: every namespace, link and rule of the run goes with
 * them once the servers in them are gone. Safe to call when not up. */
void net_down(void);

/* Async-signal-safe: SIGKILL the holders now. */
void net_kill_now(void);

bool net_on(void);
int net_host_count(void);
const char *net_host_name(int h);
const char *net_host_addr(int h);     /* NET_LAB: locklab's own side */
pid_t net_host_pid(int h);            /* a process in host h's namespace */
int64_t net_setup_ns(void);           /* how long net_up took */

/* The host called name, or -1. */
int net_host_find(const char *name);

/* The host whose namespace process ns_pid holds (a server's ns_pid), or
 * NET_LAB for 0. */
int net_host_of_ns(pid_t ns_pid);

/* The host client idx runs on, or NET_LAB. */
int net_client_host(int idx);

/* In client idx's own process, right after the fork: join its host. 0, or
 * -1 (its host is gone). */
int net_enter_client(int idx);

/* Run argv (a tool: argv[0] is found on PATH, /usr/sbin, /sbin) in host
 * h's namespace (NET_LAB: this one, -2: the switch's), input on its stdin;
 * what it prints into out. Its wait status, or -1 when it did not start. */
#define NET_SWITCH -2
int net_exec(int h, char *const argv[], const char *input, char *out, size_t outlen);

/* net_exec for a tool that must succeed: 0, or -1 with err filled with
 * what it printed (or that it is missing: install package). */
int net_run(int h, char *const argv[], const char *input, const char *package,
            struct lab_err *err);

/* ------------------------------------------------------------ net_cut.c */

/* A TCP connect from host from to host to's probe listener within
 * timeout_ms: NET_PROBE_OK, _REFUSED (a reset came back), _SILENT (no
 * answer in time) or _ERROR; *took_ns how long it took. */
enum net_probe { NET_PROBE_OK = 0, NET_PROBE_REFUSED, NET_PROBE_SILENT, NET_PROBE_ERROR };
enum net_probe net_probe(int from, int to, int timeout_ms, int64_t *took_ns);
/* The same from the namespace of process ns (0: locklab's own) to addr. */
enum net_probe net_probe_at(pid_t ns, const char *addr, int timeout_ms, int64_t *took_ns);
const char *net_probe_word(enum net_probe p);

/* Cut: what every host of mask `from` sends to the hosts of mask `to`
 * (bit h: host h) is lost on arrival; reject: a reset back at once, else
 * silence. The hosts that got rules are added to *ruled. 0, or -1 with err filled (the hosts
 * ruled so far stay in *ruled, for net_heal). */
int net_cut(unsigned from, unsigned to, bool reject, unsigned *ruled, struct lab_err *err);

/* Remove the cuts from the hosts of mask ruled. 0, or -1 with err filled. */
int net_heal(unsigned ruled, struct lab_err *err);

/* The hosts of mask m by name, "h1,h2", into buf. */
const char *net_mask_names(unsigned m, char *buf, size_t n);

/* ---------------------------------------------------------- net_delay.c */

/* Slow links: a delaying TCP proxy of the lab's (net_proxy.c) in the path
 * of every link a delay entry (fault_spec.between) of the run names, from
 * the hosts' set-up on, so that connections made before a delay fires are
 * slowed by it too. It listens on 127.0.0.1:NET_DELAY_PORT in those hosts'
 * namespaces, where an nftables rule sends it their TCP for each other. */
#define NET_DELAY_PORT 11       /* below the ports servers get: no clash */
#define NET_DELAY_PROBES_MAX 8  /* connections of one probe */

/* Once net_up made the hosts, before any server starts: start the proxy
 * and the redirects when a delay entry of scns names a link. 0, or -1 with
 * err. net_delay_down stops it (before net_down: its sockets hold the
 * hosts' namespaces); should locklab die, it dies with it. */
int net_delay_up(struct scenario *const *scns, int n, struct lab_err *err);
void net_delay_down(void);

/* Is the proxy in the path between hosts a and b? */
bool net_delay_in_path(int a, int b);

/* What host from sends to host to is held latency_ns (give or take
 * jitter_ns, uniformly) from now on; 0 0: passed on at once. */
void net_delay_set(int from, int to, int64_t latency_ns, int64_t jitter_ns);

/* Connections through the proxy open now. */
long net_delay_live(void);

/* k probes at once, probe j from host from[j] to host to[j]'s probe
 * listener through the proxy: n connections each, each timed from its
 * connect to the end of stream that comes back (so what to[j] sends to
 * from[j]); their median into p50[j] (-1 when one failed or took longer
 * than timeout_ms). 0, or -1 when any failed. */
int net_delay_probe(const int *from, const int *to, int k, int n, int timeout_ms, int64_t *p50);

#endif
