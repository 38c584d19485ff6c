/*
 * servers.c - the processes of embedded servers, whatever their store (see
 * servers.h): spawn, track for the signal handlers, kill a process tree,
 * restart, stop, and their directories.
 *
 * A free port is found by binding port 0 on 127.0.0.1 and reading back what
 * the kernel chose; between closing that socket and the server binding it
 * another process could take it, so each store retries a server that exits
 * during start-up on a new port a few times before giving up. All servers of one
 * locklab process live under one mkdtemp() directory that is removed when
 * the last of them stops. Its owner holds an flock on the file `owner` in
 * it for as long as it lives (its forked clients with it, never an exec'd
 * server), so the next run can tell the folder of a process killed before
 * it could remove it from one still in use, whatever the process is called
 * (the test programs use these servers too).
 */
#include "servers.h"
#include "clockshim.h"
#include "subproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SERVERS_MAX 32
#define STOP_GRACE_MS 1000

/* Pids of running servers, readable from signal handlers. */
static volatile pid_t running[SERVERS_MAX];
static struct server *tracked[SERVERS_MAX];
static char base_dir[256];
static int owner_fd = -1; /* the flock on base_dir/owner, held while base_dir is ours */
static servers_placement placement;

void servers_set_placement(servers_placement place)
{
    placement = place;
}

void servers_reset(struct server *s)
{
    char place[sizeof s->place];
    memcpy(place, s->place, sizeof place);
    memset(s, 0, sizeof *s);
    memcpy(s->place, place, sizeof place);
}

bool servers_lan_prefix(const struct server *s, char *out, size_t n)
{
    const char *dot = strrchr(s->host, '.');
    bool lan = strcmp(s->host, "127.0.0.1") != 0 && dot;
    snprintf(out, n, "%.*s", lan ? (int)(dot - s->host) : 0, s->host);
    return lan;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static int track(struct server *s)
{
    for (int i = 0; i < SERVERS_MAX; i++)
        if (running[i] == 0) {
            running[i] = s->pid;
            tracked[i] = s;
            return 0;
        }
    return -1;
}

static void untrack(pid_t pid)
{
    for (int i = 0; i < SERVERS_MAX; i++)
        if (running[i] == pid) {
            running[i] = 0;
            tracked[i] = NULL;
        }
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int servers_enter_netns(pid_t ns_pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/net", (int)ns_pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = setns(fd, CLONE_NEWNET);
    close(fd);
    return rc;
}

/* Is the folder dir (of pid) still someone's? Its owner holds an flock on
 * dir/owner; a folder without that file (one being made this instant, or
 * one of an older locklab) counts as used while pid exists. */
static bool dir_in_use(const char *dir, long pid)
{
    char path[640];
    snprintf(path, sizeof path, "%s/owner", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kill((pid_t)pid, 0) == 0 || errno == EPERM;
    bool used = flock(fd, LOCK_EX | LOCK_NB) != 0;
    close(fd);
    return used;
}

/* Remove the folders a locklab killed before it could (SIGKILL) left in
 * tmp: locklab-<pid>-XXXXXX that nobody holds any more (dir_in_use). */
static void remove_stale_dirs(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        if (strncmp(e->d_name, "locklab-", 8) != 0)
            continue;
        long pid = strtol(e->d_name + 8, &end, 10);
        if (end == e->d_name + 8 || *end != '-' || strlen(end) != 7 || pid <= 0 ||
            pid == (long)getpid())
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        if (!dir_in_use(path, pid))
            nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
    closedir(d);
}

static int ensure_base_dir(struct lab_err *err)
{
    if (base_dir[0])
        return 0;
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    remove_stale_dirs(tmp);
    snprintf(base_dir, sizeof base_dir, "%s/locklab-%d-XXXXXX", tmp, (int)getpid());
    if (!mkdtemp(base_dir)) {
        lab_err_set(err, errno, "cannot create a temporary directory %s: %s", base_dir,
                    strerror(errno));
        base_dir[0] = '\0';
        return -1;
    }
    char owner[300];
    snprintf(owner, sizeof owner, "%s/owner", base_dir);
    owner_fd = open(owner, O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    if (owner_fd < 0 || flock(owner_fd, LOCK_EX) != 0) {
        lab_err_set(err, errno, "cannot lock %s: %s", owner, strerror(errno));
        if (owner_fd >= 0)
            close(owner_fd);
        owner_fd = -1;
        nftw(base_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        base_dir[0] = '\0';
        return -1;
    }
    return 0;
}

static void remove_base_dir_if_unused(void)
{
    for (int i = 0; i < SERVERS_MAX; i++)
        if (running[i])
            return;
    if (base_dir[0]) {
        nftw(base_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        base_dir[0] = '\0';
        if (owner_fd >= 0)
            close(owner_fd);
        owner_fd = -1;
    }
}

/* Is the binary runnable? Searches PATH like execvp would. */
int servers_binary_path(const char *name, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s", name);
    if (strchr(name, '/'))
        return access(name, X_OK);
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        snprintf(out, outlen, "%.*s/%s", (int)n, p, name);
        if (access(out, X_OK) == 0)
            return 0;
        p += n + (end ? 1 : 0);
    }
    snprintf(out, outlen, "%s", name);
    return -1;
}

int servers_binary_exists(const char *name)
{
    char buf[1024];
    return servers_binary_path(name, buf, sizeof buf) == 0;
}

int servers_version(char *const argv[], char *out, size_t outlen)
{
    char prog[1024], buf[512];
    if (servers_binary_path(argv[0], prog, sizeof prog) != 0)
        return -1;
    char *args[8] = {prog};
    for (int i = 1; i < 7 && argv[i]; i++)
        args[i] = argv[i];
    int st = subproc_capture(args, buf, sizeof buf);
    buf[strcspn(buf, "\n")] = '\0';
    if (st != 0 || !buf[0])
        return -1;
    snprintf(out, outlen, "%s", buf);
    return 0;
}

/* Fork and exec argv for s, output to s->dir/logname, in its own process
 * group, with a death signal so it dies with locklab. */
static pid_t spawn(const struct server *s, const char *logname, char *const argv[])
{
    char logpath[600];
    snprintf(logpath, sizeof logpath, "%s/%s", s->dir, logname);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* child: own process group, dies with locklab, output to its log */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127); /* locklab died before the death signal was set */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    int nul = open("/dev/null", O_RDONLY);
    if (nul >= 0)
        dup2(nul, 0);
    if (s->ns_pid > 0 && servers_enter_netns(s->ns_pid) != 0)
        _exit(126); /* its host is gone: never run it on the wrong network */
    if (s->preload) {
        char clock_file[600];
        snprintf(clock_file, sizeof clock_file, "%s/%s", s->dir, CLOCKSHIM_FILE);
        setenv("LD_PRELOAD", s->preload, 1);
        setenv(CLOCKSHIM_ENV, clock_file, 1);
    }
    execvp(argv[0], argv);
    _exit(127);
}

int servers_spawn(struct server *s, const char *logname, char *const argv[], struct lab_err *err)
{
    s->pid = spawn(s, logname, argv);
    if (s->pid < 0) {
        lab_err_set(err, errno, "fork: %s", strerror(errno));
        s->pid = 0;
        return -1;
    }
    if (track(s) != 0) {
        kill(s->pid, SIGKILL);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
        lab_err_set(err, EMFILE, "too many embedded servers");
        return -1;
    }
    return 0;
}

int servers_prepare(struct server *s, const char *role, struct lab_err *err)
{
    if (ensure_base_dir(err) != 0)
        return -1;
    snprintf(s->role, sizeof s->role, "%s", role);
    snprintf(s->host, sizeof s->host, "127.0.0.1");
    s->ns_pid = 0;
    if (placement)
        placement(s->place, s->host, sizeof s->host, &s->ns_pid);
    s->port = free_port();
    if (s->port < 0) {
        lab_err_set(err, errno, "cannot find a free loopback port: %s", strerror(errno));
        return -1;
    }
    snprintf(s->dir, sizeof s->dir, "%s/%s-%d", base_dir, role, s->port);
    if (mkdir(s->dir, 0700) != 0 && errno != EEXIST) {
        lab_err_set(err, errno, "cannot create %s: %s", s->dir, strerror(errno));
        return -1;
    }
    return 0;
}

int servers_free_port(void)
{
    return free_port();
}

int servers_exited(struct server *s)
{
    int status;
    if (s->pid > 0 && waitpid(s->pid, &status, WNOHANG) == s->pid) {
        untrack(s->pid);
        s->pid = 0;
        return 1;
    }
    return s->pid <= 0;
}

static int wait_exit(pid_t pid, int ms)
{
    for (int waited = 0; waited < ms; waited += 5) {
        pid_t r = waitpid(pid, NULL, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD))
            return 0;
        lab_sleep_ns(5 * 1000000, NULL);
    }
    return -1;
}

int servers_descendants(pid_t pid, pid_t *out, int max)
{
    static pid_t proc[8192][2]; /* every process: its pid and its parent's */
    int n = 0, found = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d)) && n < 8192;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (lab_read_small(path, buf, sizeof buf) < 0)
            continue;
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        int ppid;
        char st;
        if (p && sscanf(p + 1, " %c %d", &st, &ppid) == 2) {
            proc[n][0] = (pid_t)atoi(e->d_name);
            proc[n++][1] = (pid_t)ppid;
        }
    }
    closedir(d);
    /* breadth first: out[] is the queue of parents still to look under */
    for (int next = -1; next < found; next++) {
        pid_t parent = next < 0 ? pid : out[next];
        for (int i = 0; i < n && found < max; i++)
            if (proc[i][1] == parent)
                out[found++] = proc[i][0];
    }
    return found;
}

int servers_signal_children(pid_t pid, int sig)
{
    pid_t kids[SERVERS_TREE_MAX];
    int n = servers_descendants(pid, kids, SERVERS_TREE_MAX);
    for (int i = 0; i < n; i++)
        kill(kids[i], sig);
    return n;
}

/* Wait (up to ms) until none of the n processes runs: gone or a zombie
 * (another parent reaps them: the server they belonged to is dead). */
static void wait_gone(const pid_t *p, int n, int ms)
{
    int64_t deadline = lab_now_ns() + (int64_t)ms * 1000000;
    for (int i = 0; i < n; i++)
        while (lab_now_ns() < deadline) {
            char st = lab_proc_state(p[i]);
            if (st == 0 || st == 'Z')
                break;
            lab_sleep_ns(1000000, NULL);
        }
}

void servers_kill(struct server *s)
{
    if (s->pid <= 0)
        return;
    /* a crash takes the whole server: the processes it forked (one per
     * connection for PostgreSQL) die with it, found before it goes */
    pid_t kids[SERVERS_TREE_MAX];
    int n = servers_descendants(s->pid, kids, SERVERS_TREE_MAX);
    kill(s->pid, SIGKILL);
    for (int i = 0; i < n; i++)
        kill(kids[i], SIGKILL);
    waitpid(s->pid, NULL, 0);
    wait_gone(kids, n, STOP_GRACE_MS);
    untrack(s->pid);
    s->pid = 0;
}

int servers_restart(struct server *s, struct lab_err *err)
{
    servers_kill(s);
    if (!s->respawn || !s->dir[0]) {
        lab_err_set(err, EINVAL, "%s cannot be restarted", s->role);
        return -1;
    }
    return s->respawn(s, err);
}

void servers_stop(struct server *s)
{
    if (s->pid > 0) {
        pid_t kids[SERVERS_TREE_MAX];
        int n = servers_descendants(s->pid, kids, SERVERS_TREE_MAX);
        for (int i = 0; i < n; i++)
            kill(kids[i], SIGCONT); /* its processes a pause stopped with it */
        kill(s->pid, s->stop_signal ? s->stop_signal : SIGTERM);
        kill(s->pid, SIGCONT); /* a server a fault paused must see the signal */
        if (wait_exit(s->pid, STOP_GRACE_MS) != 0) {
            kill(s->pid, SIGKILL);
            for (int i = 0; i < n; i++)
                kill(kids[i], SIGKILL);
            waitpid(s->pid, NULL, 0);
        }
        wait_gone(kids, n, STOP_GRACE_MS);
        untrack(s->pid);
        s->pid = 0;
    }
    if (s->dir[0]) {
        nftw(s->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        s->dir[0] = '\0';
    }
    remove_base_dir_if_unused();
}

void servers_stop_all(void)
{
    for (int i = 0; i < SERVERS_MAX; i++)
        if (running[i] && tracked[i])
            servers_stop(tracked[i]);
    remove_base_dir_if_unused();
}

void servers_kill_all_now(void)
{
    for (int i = 0; i < SERVERS_MAX; i++)
        if (running[i] > 0)
            kill(running[i], SIGKILL);
}
