/*
 * servers_mysql.h - an embedded MariaDB server: a fresh data directory in
 * locklab's temporary directory, mariadbd on a free loopback port with its
 * socket beside it, ready when a real client connection answers a query,
 * stopped with the other embedded servers (servers.h) on every exit path.
 */
#ifndef LOCKLAB_SERVERS_MYSQL_H
#define LOCKLAB_SERVERS_MYSQL_H

#include <stdint.h>

#include "servers.h"

/* Create a data directory with mariadb-install-db, start mariadbd on it and
 * wait until a client connects and a query answers; *install_ns and
 * *startup_ns (either may be NULL) receive how long the first step and the
 * whole took. The binaries are
 * $LOCKLAB_MARIADBD and $LOCKLAB_MARIADB_INSTALL_DB, else mariadbd and
 * mariadb-install-db on PATH or in /usr/sbin. Gives up when *stop (may be
 * NULL) is set. 0, or -1 with err filled (ENOENT when MariaDB is not
 * installed). A restart fault starts it again on its port and data. */
int servers_mysql_start(struct server *s, const volatile int *stop, int64_t *install_ns,
                        int64_t *startup_ns, struct lab_err *err);

/* Does a MariaDB at host:port accept a connection and answer SELECT 1
 * within timeout_ms? 0 or -1 with err filled. */
int servers_mysql_ping(const char *host, int port, int timeout_ms, struct lab_err *err);

/* The version line of the mariadbd the lab starts. 0, or -1 when it is
 * not installed. */
int servers_mysql_version(char *out, size_t outlen);

#endif
