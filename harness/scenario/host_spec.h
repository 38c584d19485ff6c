/*
 * host_spec.h - the hosts: section of a scenario as the loader read it
 * (harness/loader/load_hosts.c): named hosts, each with what runs on it.
 *
 * A host is a network namespace of its own that the run creates
 * (harness/net/); a member is a client (client:N) or an embedded server by
 * the name it has when the run starts (redis, redis-node:I, redis-master,
 * redis-replica:I, sentinel:I). Whatever no host lists stays where it is
 * without hosts: in locklab's own namespace, which every host reaches
 * (the stock store always does). No hosts: section, one host: today's lab.
 */
#ifndef LOCKLAB_HOST_SPEC_H
#define LOCKLAB_HOST_SPEC_H

#define SCN_MAX_HOSTS 8        /* hosts of one scenario */
#define SCN_HOST_MEMBERS 16    /* members of one host */
#define SCN_HOST_NAME 16       /* a host's name, NUL included */

struct scenario_host {
    char name[SCN_HOST_NAME];                 /* [a-z0-9-], not a role or client name */
    int n_members;
    char members[SCN_HOST_MEMBERS][32];       /* "client:0", "redis-master", "sentinel:1" */
};

#endif
