/*
 * handoff_split.c - timestamps of a handoff's parts, taken where a notified
 * design already looks: the releaser's clock when it sends the release (it
 * travels in the unlock message), the kernel's receive timestamp of that
 * message on the waiter's socket (SO_TIMESTAMPNS, read with MSG_PEEK just
 * before the design's own read, one extra system call per wake-up), the
 * attempt's send time and its answer. The kernel stamps in CLOCK_REALTIME;
 * it is turned into CLOCK_MONOTONIC (lab_now_ns) by the offset between the
 * two clocks read at that moment. The sums land in the client's shared
 * lock_stats, the runner adds them up (summary.json's handoff_split).
 */
#include "handoff_split.h"

#include <math.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "lab.h"

void handoff_split_arm(int fd)
{
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
}

int64_t handoff_split_arrival(int fd)
{
    char byte, control[CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                         .msg_controllen = sizeof control};
    if (recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT) <= 0)
        return 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec at, real;
            memcpy(&at, CMSG_DATA(cm), sizeof at);
            clock_gettime(CLOCK_REALTIME, &real);
            int64_t mono = lab_now_ns();
            int64_t real_ns = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec;
            return mono - (real_ns - ((int64_t)at.tv_sec * 1000000000LL + at.tv_nsec));
        }
    return 0;
}

#define SPLIT_RATIO 1.25

/* The bucket of a part of ns nanoseconds (lock_stats.split_buckets). */
static int split_bucket(int64_t ns)
{
    double us = (double)ns / 1e3;
    int i = us > 1 ? (int)(log(us) / log(SPLIT_RATIO)) : 0;
    return i < LOCK_SPLIT_BUCKETS ? i : LOCK_SPLIT_BUCKETS - 1;
}

void handoff_split_note(struct lock_stats *st, int granted, int64_t exit_ns, int64_t arrive_ns,
                        int64_t sent_ns, int64_t now)
{
    if (!granted) {
        st->split_lost++;
        return;
    }
    if (exit_ns <= 0 || arrive_ns < exit_ns || sent_ns < arrive_ns || now < sent_ns)
        return;
    st->split_handoffs++;
    st->split_delivery_ns += arrive_ns - exit_ns;
    st->split_scheduling_ns += sent_ns - arrive_ns;
    st->split_acquire_ns += now - sent_ns;
    int64_t parts[3] = {arrive_ns - exit_ns, sent_ns - arrive_ns, now - sent_ns};
    for (int k = 0; k < 3; k++)
        st->split_buckets[k][split_bucket(parts[k])]++;
}

double handoff_split_p50(const struct lock_stats *st, int part)
{
    int64_t seen = 0;
    for (int i = 0; i < LOCK_SPLIT_BUCKETS; i++) {
        seen += st->split_buckets[part][i];
        if (2 * seen >= st->split_handoffs && seen > 0)
            return pow(SPLIT_RATIO, i + 0.5); /* the bucket's geometric middle */
    }
    return 0;
}

void handoff_split_add(struct lock_stats *sum, const struct lock_stats *one)
{
    sum->split_handoffs += one->split_handoffs;
    sum->split_delivery_ns += one->split_delivery_ns;
    sum->split_scheduling_ns += one->split_scheduling_ns;
    sum->split_acquire_ns += one->split_acquire_ns;
    sum->split_lost += one->split_lost;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < LOCK_SPLIT_BUCKETS; i++)
            sum->split_buckets[k][i] += one->split_buckets[k][i];
}
