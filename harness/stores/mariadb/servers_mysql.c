/*
 * servers_mysql.c - embedded MariaDB (see servers_mysql.h).
 *
 * Debian's mariadb-server, run in the way measured to start in about a
 * second: mariadb-install-db --no-defaults (no /etc/mysql config read, no
 * test database, root without a password) into <dir>/data, then mariadbd
 * --no-defaults with its port, socket and pid file in the server's own
 * directory, no binary log, a 64 MB buffer pool and 16 MB redo log. The
 * data directory is the run's only: it goes with the server's directory
 * when the server stops. mariadbd is stopped with SIGKILL, as ZooKeeper is:
 * nothing in it must outlive the invocation, and an orderly InnoDB shutdown
 * costs time an interrupted run does not have. A restart fault starts it
 * again on the same data: InnoDB recovers the committed rows (the unique
 * lock table keeps its rows), sessions and their GET_LOCK locks are gone.
 */
#include "servers_mysql.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mysql_conn.h"
#include "subproc.h"

#define MYSQL_START_TIMEOUT_MS 30000

/* The runnable path of a binary: $env, else name on PATH, else /usr/sbin
 * (Debian puts mariadbd there, off a normal user's PATH). 0 or -1. */
static int find_binary(const char *env, const char *name, char *out, size_t n)
{
    const char *e = getenv(env);
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return access(out, X_OK);
    }
    const char *path = getenv("PATH");
    char dirs[2048];
    snprintf(dirs, sizeof dirs, "%s:/usr/sbin:/usr/local/sbin", path ? path : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, n, "%s/%s", d, name);
        if (access(out, X_OK) == 0)
            return 0;
    }
    snprintf(out, n, "%s", name);
    return -1;
}

int servers_mysql_ping(const char *host, int port, int timeout_ms, struct lab_err *err)
{
    struct st_mysql *m = mysql_conn_open("MariaDB", host, port, NULL, timeout_ms, err);
    if (!m)
        return -1;
    int64_t one = 0;
    int rc = mysql_conn_int(m, "SELECT 1", &one, NULL, err);
    mysql_conn_close(m);
    if (rc == 0 && one != 1) {
        lab_err_set(err, EPROTO, "MariaDB at %s:%d answered SELECT 1 with %lld", host, port,
                    (long long)one);
        rc = -1;
    }
    return rc;
}

/* On a run's own network (hosts:) the clients log in from its addresses,
 * not from localhost, the only place mariadb-install-db lets root in from:
 * a file the server runs at each start lets root in from the run's /24,
 * and no client's address is looked up by name (there is no DNS on a
 * host). Its arguments into args (2), or none on loopback. 0, or -1 with
 * err filled. */
static int lan_login(struct server *s, char (*args)[640], struct lab_err *err)
{
    char lan[64], path[600], sql[400];
    args[0][0] = args[1][0] = '\0';
    if (!servers_lan_prefix(s, lan, sizeof lan))
        return 0;
    snprintf(path, sizeof path, "%s/lan-login.sql", s->dir);
    snprintf(sql, sizeof sql,
             "CREATE USER IF NOT EXISTS '%s'@'%s.%%' IDENTIFIED BY '%s';\n"
             "GRANT ALL PRIVILEGES ON *.* TO '%s'@'%s.%%' WITH GRANT OPTION;\n",
             MYSQL_CONN_USER, lan, MYSQL_CONN_PASSWORD, MYSQL_CONN_USER, lan);
    FILE *f = fopen(path, "w");
    if (!f || fputs(sql, f) < 0 || fclose(f) != 0) {
        lab_err_set(err, errno, "cannot write %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    snprintf(args[0], sizeof args[0], "--init-file=%s", path);
    snprintf(args[1], sizeof args[1], "--skip-name-resolve");
    return 0;
}

static int spawn_mysqld(struct server *s, struct lab_err *err)
{
    char bin[PATH_MAX], port[32], datadir[600], sock[600], pidf[600];
    if (find_binary("LOCKLAB_MARIADBD", "mariadbd", bin, sizeof bin) != 0) {
        lab_err_set(err, ENOENT, "%s not found: install MariaDB (apt-get install "
                    "mariadb-server, or `make test`) or point --mysql at a server", bin);
        return -1;
    }
    snprintf(port, sizeof port, "--port=%d", s->port);
    snprintf(datadir, sizeof datadir, "--datadir=%s/data", s->dir);
    snprintf(sock, sizeof sock, "--socket=%s/mysqld.sock", s->dir);
    snprintf(pidf, sizeof pidf, "--pid-file=%s/mysqld.pid", s->dir);
    char bind[96];
    snprintf(bind, sizeof bind, "--bind-address=%s", s->host);
    char lan[2][640];
    if (lan_login(s, lan, err) != 0)
        return -1;
    char *const argv[] = {bin, "--no-defaults", "--user=root", datadir, port,
                          bind, sock, pidf, "--skip-log-bin",
                          "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=16M",
                          "--max-connections=1000", lan[0][0] ? lan[0] : NULL, lan[1], NULL};
    return servers_spawn(s, "mariadbd.log", argv, err);
}

/* Wait until the server answers a query; -1 with err filled when it exited
 * or did not answer in time. */
static int wait_ready(struct server *s, const volatile int *stop, struct lab_err *err)
{
    int64_t deadline = lab_now_ns() + (int64_t)MYSQL_START_TIMEOUT_MS * 1000000;
    while (lab_now_ns() < deadline && !(stop && *stop)) {
        if (servers_exited(s)) {
            lab_err_set(err, ECHILD, "mariadbd exited during start-up (see %s/mariadbd.log)",
                        s->dir);
            return -1;
        }
        if (servers_mysql_ping(s->host, s->port, 1000, NULL) == 0)
            return 0;
        lab_sleep_ns(20 * 1000000, NULL);
    }
    if (stop && *stop)
        lab_err_set(err, EINTR, "interrupted while MariaDB was starting");
    else
        lab_err_set(err, ETIMEDOUT, "mariadbd on port %d did not answer within %d s (see "
                    "%s/mariadbd.log)", s->port, MYSQL_START_TIMEOUT_MS / 1000, s->dir);
    return -1;
}

static int respawn_mysqld(struct server *s, struct lab_err *err)
{
    return spawn_mysqld(s, err) == 0 ? wait_ready(s, NULL, err) : -1;
}

/* mariadb-install-db into s->dir/data; 0 or -1 with err filled. */
static int install_db(struct server *s, struct lab_err *err)
{
    char bin[PATH_MAX], datadir[600], out[4096];
    if (find_binary("LOCKLAB_MARIADB_INSTALL_DB", "mariadb-install-db", bin, sizeof bin) != 0) {
        lab_err_set(err, ENOENT, "%s not found: install MariaDB (apt-get install "
                    "mariadb-server, or `make test`) or point --mysql at a server", bin);
        return -1;
    }
    snprintf(datadir, sizeof datadir, "--datadir=%s/data", s->dir);
    /* the server's own sizes too: the redo log is made here, at 16 MB
     * rather than the default 96 MB */
    char *const argv[] = {bin, "--no-defaults", datadir, "--user=root",
                          "--auth-root-authentication-method=normal", "--skip-test-db",
                          "--skip-log-bin", "--innodb-buffer-pool-size=64M",
                          "--innodb-log-file-size=16M", NULL};
    int status = subproc_capture(argv, out, sizeof out);
    if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    char *nl = strrchr(out, '\n'); /* the last complete line says why */
    while (nl && nl > out && nl[1] == '\0') {
        *nl = '\0';
        nl = strrchr(out, '\n');
    }
    lab_err_set(err, EIO, "mariadb-install-db failed: %.200s", nl ? nl + 1 : out);
    return -1;
}

int servers_mysql_start(struct server *s, const volatile int *stop, int64_t *install_ns,
                        int64_t *startup_ns, struct lab_err *err)
{
    int64_t t0 = lab_now_ns();
    servers_reset(s); /* its place kept */
    if (servers_prepare(s, "mariadb", err) != 0)
        return -1;
    s->stop_signal = SIGKILL;
    if (strlen(s->dir) + sizeof "/mysqld.sock" > 107) {
        lab_err_set(err, ENAMETOOLONG, "the socket path under %s is too long for a Unix socket "
                    "(set TMPDIR to a shorter directory)", s->dir);
        servers_stop(s);
        return -1;
    }
    if (install_db(s, err) != 0) {
        if (stop && *stop) /* a terminal's Ctrl-C reaches install-db too */
            lab_err_set(err, EINTR, "interrupted while mariadb-install-db ran");
        servers_stop(s);
        return -1;
    }
    if (install_ns)
        *install_ns = lab_now_ns() - t0;
    /* a port taken between choosing and binding it makes mariadbd exit:
     * try another, as the Redis start does */
    for (int attempt = 0; attempt < 3; attempt++) {
        if (attempt)
            s->port = servers_free_port();
        if (spawn_mysqld(s, err) != 0)
            break;
        s->respawn = respawn_mysqld;
        if (wait_ready(s, stop, err) == 0) {
            if (startup_ns)
                *startup_ns = lab_now_ns() - t0;
            return 0;
        }
        if (stop && *stop)
            break;
        servers_kill(s);
    }
    servers_stop(s);
    return -1;
}

int servers_mysql_version(char *out, size_t outlen)
{
    char bin[512];
    if (find_binary("LOCKLAB_MARIADBD", "mariadbd", bin, sizeof bin) != 0)
        return -1;
    char *argv[] = {bin, "--version", NULL};
    return servers_version(argv, out, outlen);
}
