/*
 * adapter_proc.c - one adapter child process and its lines (see
 * adapter_proc.h).
 *
 * The child is forked from the client process, so it is in the client's
 * process group: a pause or kill fault aimed at the client's group hits the
 * library with it, as a GC pause or crash hits a user's process. It gets
 * PR_SET_PDEATHSIG so that it can never outlive its client, even one killed
 * with SIGKILL. Reads never block without a deadline: poll() in slices of at
 * most 100 ms, checking the run's stop flag between them, and stderr is
 * drained in the same poll (and while the child is given time to quit, and
 * once more after it is reaped), so a child that logs a lot never blocks on
 * a full pipe while it is being waited for, and what it wrote last is kept.
 * The kept copy of its stderr is bounded: a chatty library cannot fill the
 * disk of a long run.
 */
#include "adapter_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define POLL_SLICE_MS 100

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_all(struct adapter_proc *p)
{
    close_fd(&p->to_fd);
    close_fd(&p->from_fd);
    close_fd(&p->err_fd);
    close_fd(&p->log_fd);
}

/* Does one of env (NAME=value entries) set the name of entry? */
static bool overridden(const char *entry, char *const env[], int n_env)
{
    const char *eq = strchr(entry, '=');
    size_t len = eq ? (size_t)(eq - entry) : strlen(entry);
    for (int i = 0; i < n_env; i++)
        if (!strncmp(env[i], entry, len) && env[i][len] == '=')
            return true;
    return false;
}

/* In the child, after fork: never returns. */
static _Noreturn void child_exec(char *const argv[], const char *dir, char **envp, int in_fd,
                                 int out_fd, int err_fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL); /* locklab ignores it; a library expects the default */
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    close_range(3, ~0U, 0);
    if (chdir(dir) != 0) {
        dprintf(2, "locklab: cannot enter %s: %s\n", dir, strerror(errno));
        _exit(127);
    }
    execvpe(argv[0], argv, envp);
    dprintf(2, "locklab: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int adapter_proc_start(struct adapter_proc *p, char *const argv[], const char *dir,
                       char *const env[], int n_env, const char *log_path,
                       struct lab_err *err)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1};
    memset(p, 0, sizeof *p);
    p->to_fd = p->from_fd = p->err_fd = p->log_fd = -1;
    snprintf(p->log_path, sizeof p->log_path, "%s", log_path ? log_path : "");
    size_t n_environ = 0;
    while (environ[n_environ])
        n_environ++;
    char **envp = calloc(n_environ + (size_t)n_env + 1, sizeof *envp);
    if (!envp || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
        pipe2(er, O_CLOEXEC) != 0) {
        lab_err_set(err, errno, "cannot start the adapter: %s", strerror(errno));
        goto fail;
    }
    /* ours replace inherited entries of the same name (a user's own
     * $LOCKLAB_REDIS for locklab must not reach the adapter) */
    size_t k = 0;
    for (int i = 0; i < n_env; i++)
        envp[k++] = env[i];
    for (size_t i = 0; i < n_environ; i++)
        if (!overridden(environ[i], env, n_env))
            envp[k++] = environ[i];
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        lab_err_set(err, errno, "cannot fork the adapter: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0)
        child_exec(argv, dir, envp, in[0], out[1], er[1], parent);
    free(envp);
    close(in[0]);
    close(out[1]);
    close(er[1]);
    p->pid = pid;
    p->to_fd = in[1];
    p->from_fd = out[0];
    p->err_fd = er[0];
    fcntl(p->from_fd, F_SETFL, O_NONBLOCK);
    fcntl(p->err_fd, F_SETFL, O_NONBLOCK);
    return 0;
fail:
    free(envp);
    for (int i = 0; i < 2; i++) {
        close_fd(&in[i]);
        close_fd(&out[i]);
        close_fd(&er[i]);
    }
    return -1;
}

/* mkdir path's last two components (the run directory above them exists);
 * one that is there already is fine: the clients of a run race to it. */
static void make_parents(const char *path)
{
    char dir[sizeof ((struct adapter_proc *)0)->log_path];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return;
    *slash = '\0';
    char *up = strrchr(dir, '/');
    if (up) {
        *up = '\0';
        mkdir(dir, 0755);
        *up = '/';
    }
    mkdir(dir, 0755);
}

/* Append n bytes of stderr to the kept copy, up to ADAPTER_STDERR_MAX; the
 * first byte beyond it ends the file with a note instead. A file that
 * cannot be written is given up quietly: the run is not the adapter's log. */
static void keep_log(struct adapter_proc *p, const char *buf, size_t n)
{
    if (!p->log_path[0] || p->log_bytes > ADAPTER_STDERR_MAX)
        return;
    if (p->log_fd < 0) {
        make_parents(p->log_path);
        p->log_fd = open(p->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (p->log_fd < 0) {
            p->log_path[0] = '\0';
            return;
        }
    }
    size_t room = (size_t)(ADAPTER_STDERR_MAX - p->log_bytes);
    size_t take = n < room ? n : room;
    if (take > 0 && write(p->log_fd, buf, take) != (ssize_t)take) {
        close_fd(&p->log_fd);
        p->log_path[0] = '\0';
        return;
    }
    p->log_bytes += (int64_t)take;
    if (take < n) {
        char note[128];
        int len = snprintf(note, sizeof note,
                           "\n[locklab: stderr cut here after %d bytes; the rest was not kept]\n",
                           ADAPTER_STDERR_MAX);
        ssize_t w = write(p->log_fd, note, (size_t)len); /* closed below, written or not */
        (void)w;
        p->log_bytes = ADAPTER_STDERR_MAX + 1;
        close_fd(&p->log_fd);
    }
}

/* Keep the last whole stderr line (printable bytes only), and the bytes
 * themselves in the kept copy. */
static void drain_err(struct adapter_proc *p)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(p->err_fd, buf, sizeof buf);
        if (r == 0) {
            close_fd(&p->err_fd);
            break;
        }
        if (r < 0)
            break;
        keep_log(p, buf, (size_t)r);
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n') {
                if (p->err_len > 0) {
                    size_t keep = p->err_len < sizeof p->last_err - 1 ? p->err_len
                                                                       : sizeof p->last_err - 1;
                    memcpy(p->last_err, p->err_line, keep);
                    p->last_err[keep] = '\0';
                }
                p->err_len = 0;
            } else if (p->err_len < ADAPTER_LINE_MAX) {
                char c = buf[i];
                p->err_line[p->err_len++] = (c >= 0x20 && c < 0x7f) ? c : '?';
            }
        }
    }
}

/* Take one line out of p->out when it holds one. */
static int take_line(struct adapter_proc *p, char *line, size_t n)
{
    char *nl = memchr(p->out, '\n', p->out_len);
    if (!nl) {
        if (p->out_len < ADAPTER_LINE_MAX)
            return 0;
        size_t keep = p->out_len < n - 1 ? p->out_len : n - 1;
        memcpy(line, p->out, keep);
        line[keep] = '\0';
        return -2;
    }
    size_t len = (size_t)(nl - p->out);
    size_t keep = len < n - 1 ? len : n - 1;
    memcpy(line, p->out, keep);
    line[keep] = '\0';
    if (keep > 0 && line[keep - 1] == '\r')
        line[keep - 1] = '\0';
    p->out_len -= len + 1;
    memmove(p->out, nl + 1, p->out_len);
    return 1;
}

int adapter_proc_read_line(struct adapter_proc *p, char *line, size_t n, int64_t deadline_ns,
                           const volatile int *stop)
{
    line[0] = '\0';
    for (;;) {
        int t = take_line(p, line, n);
        if (t != 0)
            return t;
        if (p->from_fd < 0)
            return -1;
        int64_t left = deadline_ns - lab_now_ns();
        if (left <= 0 || (stop && *stop))
            return 0;
        struct pollfd fds[2] = {{.fd = p->from_fd, .events = POLLIN},
                                {.fd = p->err_fd, .events = POLLIN}};
        int ms = left / 1000000 + 1 < POLL_SLICE_MS ? (int)(left / 1000000 + 1) : POLL_SLICE_MS;
        int r = poll(fds, p->err_fd >= 0 ? 2 : 1, ms);
        if (r < 0 && errno != EINTR)
            return -1;
        if (r <= 0)
            continue;
        if (p->err_fd >= 0 && fds[1].revents)
            drain_err(p);
        if (fds[0].revents) {
            ssize_t got = read(p->from_fd, p->out + p->out_len, ADAPTER_LINE_MAX - p->out_len);
            if (got == 0) {
                close_fd(&p->from_fd);
                if (p->err_fd >= 0)
                    drain_err(p);
            } else if (got < 0 && errno != EAGAIN && errno != EINTR) {
                close_fd(&p->from_fd);
            } else if (got > 0) {
                p->out_len += (size_t)got;
            }
        }
    }
}

int adapter_proc_write(struct adapter_proc *p, const char *buf, size_t len)
{
    while (len > 0 && p->to_fd >= 0) {
        ssize_t w = write(p->to_fd, buf, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        len -= (size_t)w;
    }
    return len == 0 ? 0 : -1;
}

/* Reap the child if it has exited; true when it is gone. */
static bool reaped(struct adapter_proc *p, int flags)
{
    if (p->pid <= 0)
        return true;
    int st;
    pid_t r;
    while ((r = waitpid(p->pid, &st, flags)) < 0 && errno == EINTR)
        ;
    if (r == p->pid || (r < 0 && errno == ECHILD)) {
        p->status = r == p->pid ? st : 0;
        p->pid = 0;
        return true;
    }
    return false;
}

void adapter_proc_kill(struct adapter_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        reaped(p, 0);
    }
    if (p->err_fd >= 0)
        drain_err(p); /* what it wrote before it died is in the pipe still */
    close_all(p);
}

int adapter_proc_finish(struct adapter_proc *p, int64_t timeout_ns)
{
    close_fd(&p->to_fd); /* EOF on stdin: a second way to say quit */
    int64_t deadline = lab_now_ns() + timeout_ns;
    while (!reaped(p, WNOHANG) && lab_now_ns() < deadline) {
        /* its last words on stderr, read as they come: a full pipe would
         * keep it from exiting */
        struct pollfd fd = {.fd = p->err_fd, .events = POLLIN};
        if (p->err_fd >= 0 && poll(&fd, 1, 2) > 0)
            drain_err(p);
        else if (p->err_fd < 0)
            lab_sleep_ns(2000000, NULL);
    }
    if (p->err_fd >= 0)
        drain_err(p);
    if (p->pid > 0) {
        adapter_proc_kill(p);
        return -1;
    }
    close_all(p);
    return p->status;
}

void adapter_proc_describe_end(struct adapter_proc *p, char *buf, size_t n)
{
    if (p->err_fd >= 0)
        drain_err(p);
    /* a child that closed its stdout is usually exiting: give it a moment */
    for (int i = 0; i < 50 && !reaped(p, WNOHANG); i++)
        lab_sleep_ns(2000000, NULL);
    int len;
    if (p->pid > 0)
        len = snprintf(buf, n, "closed its stdout");
    else if (WIFSIGNALED(p->status))
        len = snprintf(buf, n, "killed by signal %d", WTERMSIG(p->status));
    else
        len = snprintf(buf, n, "exited with status %d", WEXITSTATUS(p->status));
    if (p->last_err[0] && len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "; stderr: %s", p->last_err);
}
