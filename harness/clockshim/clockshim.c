/*
 * clockshim.c - a library preloaded (LD_PRELOAD) into an embedded
 * redis-server so that a fault can move that server's wall clock while it
 * runs: the clock jump of Kleppmann's critique of Redlock, where a master
 * whose clock leaps forward expires a lock early.
 *
 * It replaces clock_gettime (the realtime clocks only), gettimeofday and
 * time, adding an offset read from a small file (clockshim.h) named by
 * $LOCKLAB_CLOCK_FILE, which the harness rewrites in place. The monotonic
 * clocks are left alone: a jump of the wall clock is what NTP or an
 * operator does to a machine, and Redis times key expiry by the wall clock.
 *
 * Why not libfaketime: Debian's libfaketime hangs Debian's redis-server
 * ("Unexpected recursive calls to clock_gettime()": it resolves and
 * allocates inside the clock calls, and jemalloc calls the clock while it
 * initialises). So this shim does nothing in a clock call but one load from
 * a mapping: no allocation, no dlsym, no file I/O, no locks. The real
 * clock_gettime is looked up once, in the constructor; a call that comes
 * before that (jemalloc starting up under dlsym) goes to the system call.
 * The file is opened and mapped once, created (8 zero bytes) when missing;
 * without the variable or the file the offset stays 0 and the shim is a
 * pass-through.
 *
 * This file is built as its own shared library (CMake target
 * locklab-clockshim), without the sanitizers: it is loaded into a program
 * that was not built with them.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clockshim.h"

#define NS_PER_S 1000000000LL

static const int64_t no_offset;
static const int64_t *offset = &no_offset; /* the mapping, once there is one */
static int (*real_clock_gettime)(clockid_t, struct timespec *);

static int64_t current_offset(void)
{
    return __atomic_load_n(offset, __ATOMIC_RELAXED);
}

static int system_clock_gettime(clockid_t clk, struct timespec *ts)
{
    int (*f)(clockid_t, struct timespec *) = __atomic_load_n(&real_clock_gettime,
                                                             __ATOMIC_ACQUIRE);
    if (f)
        return f(clk, ts);
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

static int is_wall_clock(clockid_t clk)
{
    return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE ||
           clk == CLOCK_REALTIME_ALARM || clk == CLOCK_TAI;
}

/* ts moved by off nanoseconds, either way. */
static void shift(struct timespec *ts, int64_t off)
{
    int64_t ns = (int64_t)ts->tv_nsec + off % NS_PER_S;
    int64_t s = (int64_t)ts->tv_sec + off / NS_PER_S + ns / NS_PER_S;
    ns %= NS_PER_S;
    if (ns < 0) {
        ns += NS_PER_S;
        s--;
    }
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)ns;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
    int rc = system_clock_gettime(clk, ts);
    if (rc == 0 && is_wall_clock(clk)) {
        int64_t off = current_offset();
        if (off)
            shift(ts, off);
    }
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    struct timespec ts;
    if (tz) {
        /* the obsolete timezone argument: what Linux reports by default */
        struct timezone *z = tz;
        z->tz_minuteswest = 0;
        z->tz_dsttime = 0;
    }
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return -1;
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
    return 0;
}

time_t time(time_t *out)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return (time_t)-1;
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}

__attribute__((constructor)) static void clockshim_init(void)
{
    void *f = dlsym(RTLD_NEXT, "clock_gettime");
    if (f) {
        int (*fn)(clockid_t, struct timespec *);
        *(void **)&fn = f; /* a data pointer to a function pointer, as POSIX allows */
        __atomic_store_n(&real_clock_gettime, fn, __ATOMIC_RELEASE);
    }
    const char *path = getenv(CLOCKSHIM_ENV);
    if (!path || !*path)
        return;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    struct stat st;
    /* a new file grows to its one number (zero); an existing one is never cut */
    if (fstat(fd, &st) == 0 && st.st_size < (off_t)sizeof(int64_t) &&
        ftruncate(fd, (off_t)sizeof(int64_t)) != 0) {
        close(fd);
        return;
    }
    void *p = mmap(NULL, sizeof(int64_t), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p != MAP_FAILED)
        offset = p; /* before main: no other thread reads it yet */
}
