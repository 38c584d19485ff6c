/*
 * servers_pg.h - an embedded PostgreSQL server: a fresh cluster per locklab
 * invocation (initdb), the postgres binary run directly on a free loopback
 * port with its socket in the server's own directory, ready when a real
 * libpq session answers. servers.h's stop, kill and restart then manage it
 * like the other servers (its backends with it: see servers_descendants).
 */
#ifndef LOCKLAB_SERVERS_PG_H
#define LOCKLAB_SERVERS_PG_H

#include <stddef.h>

#include "servers.h"

/* The database and user the embedded server is made with. */
#define SERVERS_PG_USER "lab"
#define SERVERS_PG_DB "postgres"

/* Make a cluster and start postgres for role, then wait until a session
 * answers. conninfo receives the libpq connection string of the server
 * ("host=127.0.0.1 port=P user=lab dbname=postgres"). Gives up when *stop
 * (may be NULL) is set. 0, or -1 with err filled (ENOENT when PostgreSQL is
 * not installed). As root, initdb and postgres run as the user postgres
 * (both refuse root) keeping the right to reach locklab's private
 * directories. */
int servers_pg_start(struct server *s, const char *role, const volatile int *stop,
                     char *conninfo, size_t conninfo_len, struct lab_err *err);

/* Check that conninfo accepts a session and answers SELECT 1 within
 * timeout_ms. 0 or -1 with err filled. */
int servers_pg_ping(const char *conninfo, int timeout_ms, struct lab_err *err);

/* The binary directory used ($LOCKLAB_PG_BINDIR, else the newest
 * /usr/lib/postgresql/<N>/bin), "" when none is found. */
const char *servers_pg_bindir(void);

/* The version line of the postgres binary the lab starts. 0, or -1 when
 * it is not installed. */
int servers_pg_version(char *out, size_t outlen);

#endif
