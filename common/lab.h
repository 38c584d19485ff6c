/*
 * lab.h - the few types and helpers every part of locklab shares.
 *
 * Errors travel as a struct lab_err (code + message, as hiredis carries
 * err/errstr on its context), verdicts are a small enum with stable names
 * used in the scenario files, the console table and summary.json, and time
 * is always CLOCK_MONOTONIC nanoseconds so that timestamps taken in
 * different client processes can be compared by the oracle.
 */
#ifndef LOCKLAB_LAB_H
#define LOCKLAB_LAB_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Exit codes of the locklab program (docs/locklab.1, EXIT STATUS). */
enum lab_exit {
    LAB_EXIT_OK = 0,          /* every expectation met */
    LAB_EXIT_EXPECT = 1,      /* a verdict differed from its expectation */
    LAB_EXIT_USAGE = 2,       /* bad usage or bad scenario; nothing started */
    LAB_EXIT_ENV = 3,         /* a server would not start or cannot be reached */
    LAB_EXIT_INTERRUPTED = 130 /* SIGINT/SIGTERM: partial results written */
};

/* Bytes (its NUL included) of an error message the reports keep whole: a
 * client's first error in its shared slot, summary.json's first_error after
 * "client N: ". A longer one is cut to end in LAB_TEXT_CUT. */
#define LAB_ERR_TEXT_MAX 1280
#define LAB_TEXT_CUT " [locklab: cut here]"

struct lab_err {
    int code;         /* 0 when no error; otherwise an errno or backend code */
    char msg[128];    /* human-readable, one sentence */
    const char *full; /* NULL, or the whole message when msg holds only its start (an
                       * adapter quoting its program's line): whoever set err keeps it
                       * until its next operation; lab_err_set clears it */
};

/* Fill err (if not NULL) with code and a printf-style message. */
void lab_err_set(struct lab_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fill err with code and text, which the caller keeps until its next
 * operation: msg holds its start, and err->full the whole when longer. */
void lab_err_set_text(struct lab_err *err, int code, const char *text);

/* The whole message of err. */
static inline const char *lab_err_text(const struct lab_err *err)
{
    return err->full ? err->full : err->msg;
}

/* Copy src into dst (n bytes, at least sizeof LAB_TEXT_CUT); a src that
 * does not fit is cut to end in LAB_TEXT_CUT. */
void lab_text_copy(char *dst, size_t n, const char *src);

enum verdict {
    VERDICT_NONE = 0,  /* no verdict yet / no expectation */
    VERDICT_SAFE,      /* no violation observed */
    VERDICT_VIOLATION, /* two holders at once, oversold, lost update */
    VERDICT_BLOCKED,   /* an acquire that should have been granted timed out */
    VERDICT_ERROR,     /* backend errors or crashed clients left no verdict */
    VERDICT_FENCED,    /* holders overlapped, but the fenced store refused every stale
                        * write and the stock is exact */
    VERDICT_UNAVAILABLE, /* no grant followed a server fault while clients kept asking:
                          * the service never came back (or the design wedged) */
    VERDICT_TOKEN_REGRESSED, /* the fenced resource refused a rightful holder: the
                              * fencing token went backwards (a store restarted empty) */
    VERDICT_NOT_EXERCISED, /* nothing went wrong, but no fault put the lock at stake:
                            * the run tested nothing of it (at_stake.h) */
    VERDICT_ANY        /* expectation only: any verdict is accepted */
};

/* An expectation: the verdicts a scenario allows, a bit each
 * (VERDICT_SET(v)); 0: no expectation; VERDICT_SET(VERDICT_ANY): all. */
typedef unsigned verdict_set;
#define VERDICT_SET(v) (1u << (unsigned)(v))
/* Does set allow v (no expectation, any, or v one of its verdicts)? */
bool verdict_set_allows(verdict_set set, enum verdict v);
/* The set as its words in the verdicts' order, joined by '/' ("safe",
 * "safe/blocked", "any"; "-" for none), into buf; returns buf. */
const char *verdict_set_name(verdict_set set, char *buf, size_t n);

/* Stable lower-case name of a verdict ("safe", "violation", ...). */
const char *verdict_name(enum verdict v);
/* Parse a verdict name; returns VERDICT_NONE when unknown. */
enum verdict verdict_parse(const char *s);

/* CLOCK_MONOTONIC in nanoseconds; comparable across processes. */
static inline int64_t lab_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleep for ns nanoseconds (restarting after signals unless *stop is set). */
void lab_sleep_ns(int64_t ns, const volatile int *stop);

/* A flag one thread raises and another sleeps on (a futex word of the
 * process): lab_flag_raise sets it to 1 and wakes the sleeper at once;
 * lab_sleep_or_flag sleeps ns, or less when *stop or *flag (NULL: none)
 * is set, and says whether the flag cut it short. */
void lab_flag_raise(volatile int *flag);
bool lab_sleep_or_flag(int64_t ns, const volatile int *stop, volatile int *flag);

/* Read the small file at path (a /proc entry) into buf of size bytes,
 * NUL-terminated: its length, or -1 when it cannot be opened or is empty. */
int lab_read_small(const char *path, char *buf, size_t size);

/* The state letter of process pid from /proc (R, S, T, Z...), 0 when it
 * is gone. */
char lab_proc_state(pid_t pid);

/* How long a SIGSTOP may take to land on a process (lab_stop_confirmed). */
#define LAB_STOP_CONFIRM_NS (500000000LL)

/* SIGSTOP pid and wait (up to timeout_ns) until the kernel says it is
 * stopped: true then, false when it died or the stop did not land. */
bool lab_stop_confirmed(pid_t pid, int64_t timeout_ns);

/* Fill buf with len random bytes from the OS (getrandom); 0 or -errno. */
int lab_random_bytes(void *buf, size_t len);

/* Write a hex token of 2*nbytes characters (+NUL) from the OS random source. */
int lab_random_hex(char *out, size_t nbytes);

/* Split "host:port" into host (hostlen bytes) and port (1..65535). 0 or -1. */
int lab_parse_hostport(const char *s, char *host, size_t hostlen, int *port);

#endif
