/*
 * lab.c - small shared helpers: error filling, verdict names, sleeping that
 * honours the run's stop flag, random tokens from the OS, and a process's
 * state as /proc shows it, and a flag one thread raises to cut another's
 * sleep short (lab_flag_raise).
 *
 * Lock tokens must be unpredictable and distinct across forked clients, so
 * they come from getrandom(2), never from rand(): forked processes would
 * inherit the same rand() state and hand out identical "unique" tokens.
 */
#include "lab.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

void lab_err_set(struct lab_err *err, int code, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    err->code = code ? code : -1;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    err->full = NULL;
    va_end(ap);
}

void lab_err_set_text(struct lab_err *err, int code, const char *text)
{
    if (!err)
        return;
    lab_err_set(err, code, "%s", text);
    if (strlen(text) >= sizeof err->msg)
        err->full = text;
}

void lab_text_copy(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len < n) {
        memcpy(dst, src, len + 1);
        return;
    }
    size_t keep = n - sizeof LAB_TEXT_CUT; /* sizeof counts the NUL */
    memcpy(dst, src, keep);
    memcpy(dst + keep, LAB_TEXT_CUT, sizeof LAB_TEXT_CUT);
}

static const char *const verdict_names[] = {
    [VERDICT_NONE] = "none",     [VERDICT_SAFE] = "safe",   [VERDICT_VIOLATION] = "violation",
    [VERDICT_BLOCKED] = "blocked", [VERDICT_ERROR] = "error", [VERDICT_FENCED] = "fenced",
    [VERDICT_UNAVAILABLE] = "unavailable", [VERDICT_TOKEN_REGRESSED] = "token-regressed",
    [VERDICT_NOT_EXERCISED] = "not-exercised",
    [VERDICT_ANY] = "any",
};

const char *verdict_name(enum verdict v)
{
    if ((unsigned)v >= sizeof verdict_names / sizeof verdict_names[0])
        return "?";
    return verdict_names[v];
}

bool verdict_set_allows(verdict_set set, enum verdict v)
{
    return set == 0 || (set & VERDICT_SET(VERDICT_ANY)) || (set & VERDICT_SET(v));
}

const char *verdict_set_name(verdict_set set, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    if (set & VERDICT_SET(VERDICT_ANY))
        set = VERDICT_SET(VERDICT_ANY);
    for (unsigned i = VERDICT_SAFE; i <= VERDICT_ANY && len < n; i++)
        if (set & VERDICT_SET(i))
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "/" : "",
                                    verdict_names[i]);
    if (!set)
        snprintf(buf, n, "-");
    return buf;
}

enum verdict verdict_parse(const char *s)
{
    for (unsigned i = VERDICT_SAFE; i < sizeof verdict_names / sizeof verdict_names[0]; i++)
        if (strcmp(s, verdict_names[i]) == 0)
            return (enum verdict)i;
    return VERDICT_NONE;
}

void lab_sleep_ns(int64_t ns, const volatile int *stop)
{
    if (ns <= 0)
        return;
    struct timespec req = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    struct timespec rem;
    while (nanosleep(&req, &rem) != 0 && errno == EINTR) {
        if (stop && *stop)
            return;
        req = rem;
    }
}

void lab_flag_raise(volatile int *flag)
{
    __atomic_store_n(flag, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

bool lab_sleep_or_flag(int64_t ns, const volatile int *stop, volatile int *flag)
{
    if (!flag) {
        lab_sleep_ns(ns, stop);
        return false;
    }
    int64_t end = lab_now_ns() + ns;
    for (;;) {
        if (__atomic_load_n(flag, __ATOMIC_SEQ_CST))
            return true;
        int64_t left = end - lab_now_ns();
        if (left <= 0 || (stop && *stop))
            return false;
        struct timespec ts = {.tv_sec = left / 1000000000LL, .tv_nsec = left % 1000000000LL};
        syscall(SYS_futex, flag, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0); /* woken, or timed out */
    }
}

int lab_random_bytes(void *buf, size_t len)
{
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int lab_random_hex(char *out, size_t nbytes)
{
    unsigned char raw[64];
    if (nbytes > sizeof raw)
        return -EINVAL;
    int rc = lab_random_bytes(raw, nbytes);
    if (rc)
        return rc;
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = hex[raw[i] >> 4];
        out[2 * i + 1] = hex[raw[i] & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}

int lab_parse_hostport(const char *s, char *host, size_t hostlen, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= hostlen)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || colon[1] == '\0' || p < 1 || p > 65535)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    *port = (int)p;
    return 0;
}

int lab_read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return (int)n;
}

char lab_proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (lab_read_small(path, buf, sizeof buf) < 0)
        return 0;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parens */
    return p && p[1] == ' ' ? p[2] : 0;
}

bool lab_stop_confirmed(pid_t pid, int64_t timeout_ns)
{
    if (kill(pid, SIGSTOP) != 0)
        return false;
    int64_t deadline = lab_now_ns() + timeout_ns;
    for (;;) {
        char c = lab_proc_state(pid);
        if (c == 'T' || c == 't')
            return true;
        if (c == 0 || c == 'Z' || lab_now_ns() > deadline)
            return false;
        lab_sleep_ns(20000, NULL);
    }
}
