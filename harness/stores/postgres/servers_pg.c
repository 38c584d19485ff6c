/*
 * servers_pg.c - the embedded PostgreSQL server (see servers_pg.h).
 *
 * One cluster per invocation, made fresh by initdb in the server's own
 * directory (trust authentication for the user "lab", no fsync while it
 * is written, locale C), then the postgres binary itself, not pg_ctl, so
 * the pid locklab tracks is the postmaster's: a fault's SIGSTOP or SIGKILL
 * lands on it, and servers.c's stop and kill take its backends with it.
 * postgres listens on 127.0.0.1 and a free port, keeps its socket in its
 * directory, runs with fsync off (nothing outlives the run) and loads
 * pg_stat_statements so the backend table can count the statements served.
 * It is stopped with SIGQUIT, PostgreSQL's immediate shutdown: no
 * checkpoint for data that is about to be removed.
 *
 * initdb and postgres refuse to run as root. As root (CI), both are
 * started through setpriv as the user postgres, keeping two capabilities
 * (reading and searching any directory) so they can reach the private,
 * root-owned temporary directories locklab and its tests make, and keeping
 * the death signal that ties them to locklab. As anyone else they run as
 * that user.
 */
#include "servers_pg.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#define PG_INITDB_TIMEOUT_MS 60000
#define PG_START_TIMEOUT_MS 30000
#define PG_RUN_AS "postgres"
#define PG_MAX_ARGS 40
#define PG_START_TRIES 3

static char bindir[256];

const char *servers_pg_bindir(void)
{
    if (bindir[0])
        return bindir;
    const char *env = getenv("LOCKLAB_PG_BINDIR");
    if (env && *env) {
        snprintf(bindir, sizeof bindir, "%s", env);
        return bindir;
    }
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) == 0) {
        int best = -1;
        for (size_t i = 0; i < g.gl_pathc; i++) {
            int v = atoi(g.gl_pathv[i] + strlen("/usr/lib/postgresql/"));
            if (v > best) {
                best = v;
                snprintf(bindir, sizeof bindir, "%.*s", (int)(strlen(g.gl_pathv[i]) -
                         strlen("/postgres")), g.gl_pathv[i]);
            }
        }
        globfree(&g);
    }
    return bindir;
}

/* A notice (a WARNING the server sends with a result) is not for the
 * terminal. */
static void quiet_notices(void *arg, const char *message)
{
    (void)arg, (void)message;
}

int servers_pg_ping(const char *conninfo, int timeout_ms, struct lab_err *err)
{
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%d", timeout_ms < 2000 ? 2 : timeout_ms / 1000);
    const char *const keys[] = {"dbname", "connect_timeout", "application_name", NULL};
    const char *const vals[] = {conninfo, timeout, "locklab-admin", NULL};
    PGconn *pc = PQconnectdbParams(keys, vals, 1);
    int ok = 0;
    if (pc && PQstatus(pc) == CONNECTION_OK) {
        PQsetNoticeProcessor(pc, quiet_notices, NULL);
        PGresult *r = PQexec(pc, "SELECT 1");
        ok = r && PQresultStatus(r) == PGRES_TUPLES_OK;
        if (!ok)
            lab_err_set(err, EPROTO, "PostgreSQL did not answer SELECT 1: %.80s",
                        PQerrorMessage(pc));
        PQclear(r);
    } else {
        char *msg = pc ? PQerrorMessage(pc) : "out of memory";
        char *nl = strchr(msg, '\n');
        lab_err_set(err, ECONNREFUSED, "no PostgreSQL session (%.*s)",
                    nl && nl - msg < 90 ? (int)(nl - msg) : 90, msg);
    }
    PQfinish(pc);
    return ok ? 0 : -1;
}

/* The user postgres runs as when locklab is root; NULL when not root. */
static const struct passwd *run_as(struct lab_err *err, int *fail)
{
    *fail = 0;
    if (geteuid() != 0)
        return NULL;
    const struct passwd *pw = getpwnam(PG_RUN_AS);
    if (!pw) {
        lab_err_set(err, ENOENT, "as root, PostgreSQL must run as the user '%s', which does not "
                    "exist (apt-get install postgresql makes it)", PG_RUN_AS);
        *fail = 1;
    } else if (!servers_binary_exists("setpriv")) {
        lab_err_set(err, ENOENT, "as root, locklab starts PostgreSQL through setpriv "
                    "(util-linux), which is missing");
        *fail = 1;
    }
    return pw;
}

/* argv for running program (a path) with args, through setpriv as user
 * pw when pw is not NULL; into argv (PG_MAX_ARGS), ids in ids_buf. */
static void build_argv(char **argv, char (*ids)[32], const struct passwd *pw,
                       const char *program, char *const args[])
{
    int n = 0;
    if (pw) {
        snprintf(ids[0], sizeof ids[0], "--reuid=%d", (int)pw->pw_uid);
        snprintf(ids[1], sizeof ids[1], "--regid=%d", (int)pw->pw_gid);
        argv[n++] = "setpriv";
        argv[n++] = ids[0];
        argv[n++] = ids[1];
        argv[n++] = "--clear-groups";
        argv[n++] = "--inh-caps=+dac_read_search,+dac_override";
        argv[n++] = "--ambient-caps=+dac_read_search,+dac_override";
        argv[n++] = "--pdeathsig=keep";
        argv[n++] = "--";
    }
    argv[n++] = (char *)program;
    for (int i = 0; args[i] && n < PG_MAX_ARGS - 1; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
}

/* The last FATAL line of the log at path, else its last non-empty line,
 * for a message (the server's directory goes when its start fails). */
static void log_tail(const char *path, char *out, size_t n)
{
    char buf[4096];
    out[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    off_t end = lseek(fd, 0, SEEK_END);
    off_t from = end > (off_t)sizeof buf - 1 ? end - (off_t)sizeof buf + 1 : 0;
    ssize_t got = pread(fd, buf, sizeof buf - 1, from);
    close(fd);
    if (got <= 0)
        return;
    buf[got] = '\0';
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
        buf[--got] = '\0';
    char *line = strrchr(buf, '\n'), *fatal = NULL;
    for (char *p = strstr(buf, "FATAL:"); p; p = strstr(p + 1, "FATAL:"))
        fatal = p;
    if (fatal)
        fatal[strcspn(fatal, "\n")] = '\0';
    const char *last = fatal ? fatal : line ? line + 1 : buf;
    size_t len = n ? strnlen(last, n - 1) : 0; /* cut to fit, as snprintf would */
    if (n) {
        memcpy(out, last, len);
        out[len] = '\0';
    }
}

/* Run initdb for s (a child of its own, waited for); 0 or -1 with err. */
static int run_initdb(const struct server *s, const struct passwd *pw, const volatile int *stop,
                      struct lab_err *err)
{
    char prog[300], data[600], log[600], ids[2][32];
    snprintf(prog, sizeof prog, "%s/initdb", servers_pg_bindir());
    snprintf(data, sizeof data, "%s/data", s->dir);
    snprintf(log, sizeof log, "%s/initdb.log", s->dir);
    char *args[] = {"-D", data, "-U", SERVERS_PG_USER, "--auth=trust", "-N", "--locale=C",
                    "-E", "UTF8", NULL};
    char *argv[PG_MAX_ARGS];
    build_argv(argv, ids, pw, prog, args);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        lab_err_set(err, errno, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    int64_t deadline = lab_now_ns() + (int64_t)PG_INITDB_TIMEOUT_MS * 1000000;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
        if ((stop && *stop) || lab_now_ns() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            lab_err_set(err, stop && *stop ? EINTR : ETIMEDOUT, "initdb %s",
                        stop && *stop ? "interrupted" : "did not finish in time");
            return -1;
        }
        lab_sleep_ns(5 * 1000000, NULL);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char tail[100];
        log_tail(log, tail, sizeof tail);
        lab_err_set(err, ECHILD, "initdb failed: %s", tail[0] ? tail : "(no output)");
        return -1;
    }
    return 0;
}

/* On a run's own network (hosts:) the clients connect from its addresses,
 * which initdb's pg_hba.conf (loopback only) refuses: let the run's /24 in
 * as it lets loopback in. 0, or -1 with err filled. */
static int lan_hba(const struct server *s, struct lab_err *err)
{
    char lan[64], path[600];
    if (!servers_lan_prefix(s, lan, sizeof lan))
        return 0;
    snprintf(path, sizeof path, "%s/data/pg_hba.conf", s->dir);
    FILE *f = fopen(path, "a");
    if (!f || fprintf(f, "host all all %s.0/24 trust\n", lan) < 0 || fclose(f) != 0) {
        lab_err_set(err, errno, "cannot add the run's network to %s: %s", path, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return 0;
}

static void conninfo_of(const struct server *s, char *out, size_t n)
{
    snprintf(out, n, "host=%s port=%d user=%s dbname=%s", s->host, s->port, SERVERS_PG_USER,
             SERVERS_PG_DB);
}

static int spawn_pg(struct server *s, struct lab_err *err)
{
    int fail;
    const struct passwd *pw = run_as(err, &fail);
    if (fail)
        return -1;
    char prog[300], data[600], port[16], sock[600], ids[2][32];
    snprintf(prog, sizeof prog, "%s/postgres", servers_pg_bindir());
    snprintf(data, sizeof data, "%s/data", s->dir);
    snprintf(port, sizeof port, "%d", s->port);
    /* the socket where the server lives, when its path fits a sockaddr_un;
     * else TCP only */
    struct sockaddr_un un;
    if (strlen(s->dir) + sizeof "/.s.PGSQL.65535" <= sizeof un.sun_path)
        snprintf(sock, sizeof sock, "unix_socket_directories=%s", s->dir);
    else
        snprintf(sock, sizeof sock, "unix_socket_directories=");
    char listen[96];
    snprintf(listen, sizeof listen, "listen_addresses=%s", s->host);
    char *args[] = {"-D", data, "-p", port, "-c", sock,
                    "-c", listen,
                    "-c", "fsync=off",
                    "-c", "max_connections=300",
                    "-c", "shared_preload_libraries=pg_stat_statements",
                    NULL};
    char *argv[PG_MAX_ARGS];
    build_argv(argv, ids, pw, prog, args);
    return servers_spawn(s, "postgres.log", argv, err);
}

/* Until a session answers; -1 with err when postgres exits or the time is
 * up (or *stop). */
static int wait_ready(struct server *s, const volatile int *stop, struct lab_err *err)
{
    char conninfo[256];
    conninfo_of(s, conninfo, sizeof conninfo);
    int64_t deadline = lab_now_ns() + (int64_t)PG_START_TIMEOUT_MS * 1000000;
    while (lab_now_ns() < deadline && !(stop && *stop)) {
        if (servers_exited(s)) {
            char log[600], tail[100];
            snprintf(log, sizeof log, "%s/postgres.log", s->dir);
            log_tail(log, tail, sizeof tail);
            lab_err_set(err, ECHILD, "postgres exited during start-up: %s", tail);
            return -1;
        }
        if (servers_pg_ping(conninfo, 2000, NULL) == 0)
            return 0;
        lab_sleep_ns(10 * 1000000, NULL);
    }
    if (stop && *stop)
        lab_err_set(err, EINTR, "interrupted while PostgreSQL was starting");
    else
        lab_err_set(err, ETIMEDOUT, "PostgreSQL on port %d did not answer within %d s", s->port,
                    PG_START_TIMEOUT_MS / 1000);
    return -1;
}

/* A restart: the same directory and port, after crash recovery. */
static int respawn_pg(struct server *s, struct lab_err *err)
{
    return spawn_pg(s, err) == 0 ? wait_ready(s, NULL, err) : -1;
}

int servers_pg_start(struct server *s, const char *role, const volatile int *stop,
                     char *conninfo, size_t conninfo_len, struct lab_err *err)
{
    servers_reset(s); /* its place kept */
    char prog[300];
    snprintf(prog, sizeof prog, "%s/postgres", servers_pg_bindir());
    if (!servers_pg_bindir()[0] || access(prog, X_OK) != 0) {
        lab_err_set(err, ENOENT, "PostgreSQL is not installed (no %.80s): apt-get install "
                    "postgresql (or `make test`), or point --postgres at a server",
                    servers_pg_bindir()[0] ? prog : "/usr/lib/postgresql/*/bin/postgres");
        return -1;
    }
    int fail;
    const struct passwd *pw = run_as(err, &fail);
    if (fail || servers_prepare(s, role, err) != 0)
        return -1;
    if (pw && chown(s->dir, pw->pw_uid, pw->pw_gid) != 0) {
        lab_err_set(err, errno, "cannot hand %.80s to %s: %s", s->dir, PG_RUN_AS,
                    strerror(errno));
        servers_stop(s);
        return -1;
    }
    s->stop_signal = SIGQUIT;
    s->respawn = respawn_pg;
    if (run_initdb(s, pw, stop, err) != 0 || lan_hba(s, err) != 0) {
        servers_stop(s);
        return -1;
    }
    /* another process may take the free port before postgres binds it:
     * then start again on a new one */
    for (int attempt = 0;; attempt++) {
        if (spawn_pg(s, err) == 0 && wait_ready(s, stop, err) == 0)
            break;
        if (attempt == PG_START_TRIES - 1 || (stop && *stop) || s->pid > 0 ||
            !strstr(err->msg, "TCP/IP")) {
            servers_stop(s);
            return -1;
        }
        s->port = servers_free_port();
    }
    conninfo_of(s, conninfo, conninfo_len);
    return 0;
}

int servers_pg_version(char *out, size_t outlen)
{
    char prog[512];
    snprintf(prog, sizeof prog, "%s/postgres", servers_pg_bindir());
    if (!servers_pg_bindir()[0])
        return -1;
    char *argv[] = {prog, "--version", NULL};
    return servers_version(argv, out, outlen);
}
