/*
 * subproc.c - run a helper program and capture its output (see subproc.h).
 */
#include "subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int subproc_sibling(const char *name, int mode, char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n)
        out[0] = '\0';
    if (len < 0)
        return -1;
    self[len] = '\0';
    const char *dir = dirname(self);
    /* installed: <prefix>/bin/locklab, helpers in <prefix>/libexec/locklab */
    char installed[PATH_MAX];
    if (snprintf(installed, sizeof installed, "%s/../libexec/locklab/%s", dir, name) <
            (int)sizeof installed &&
        access(installed, mode) == 0) {
        snprintf(out, n, "%s", installed);
        return 0;
    }
    snprintf(out, n, "%s/%s", dir, name);
    return access(out, mode);
}

int subproc_capture(char *const argv[], char *out, size_t outlen)
{
    int fds[2];
    out[0] = '\0';
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127); /* locklab died before the death signal was set */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) {
            dup2(null, 0);
            close(null);
        }
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    size_t used = 0;
    char sink[1024];
    for (;;) { /* read to the end, keeping what fits */
        char *dst = used + 1 < outlen ? out + used : sink;
        size_t room = used + 1 < outlen ? outlen - 1 - used : sizeof sink;
        ssize_t got = read(fds[0], dst, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (dst == out + used)
            used += (size_t)got;
    }
    out[used] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return status;
}

pid_t subproc_tied(int *ready_fd, int *why)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        *why = errno;
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        setpgid(0, 0);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_DFL);
        signal(SIGPIPE, SIG_IGN);
        close(p[0]);
        *ready_fd = p[1];
        return 0;
    }
    int fork_errno = errno;
    close(p[1]);
    int said = EIO;
    ssize_t got = pid > 0 ? read(p[0], &said, sizeof said) : -1;
    close(p[0]);
    if (pid < 0 || got != (ssize_t)sizeof said || said) {
        *why = pid < 0 ? fork_errno : said;
        if (pid > 0) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        return -1;
    }
    return pid;
}
