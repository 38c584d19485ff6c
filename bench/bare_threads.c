/*
 * bare_threads.c - the frame the blocking bare loops share (PostgreSQL,
 * MariaDB): parse CONN SECONDS [CONNECTIONS], open the connections, run
 * their cycles for the time given and print the count. Without
 * CONNECTIONS, one connection on the main thread: `bench overhead`'s
 * yardstick. With it, one thread per connection, each on a key of its
 * own, all started together once every one is open: `bench ceiling`'s,
 * the store at N connections (threads are fine for a bare loop: each
 * blocks in its own round trip, the store does the work).
 */
#include "bare_threads.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_CONNECTIONS 10000

struct worker {
    const struct bare_loop *loop;
    pthread_barrier_t *ready;
    void *state;
    long long end_ns, cycles;
    int failed;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void work(struct worker *w)
{
    while (!w->failed && now_ns() < w->end_ns) {
        if (w->loop->cycle(w->state) != 0)
            w->failed = 1;
        else
            w->cycles++;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(w->ready); /* every connection open, end_ns set */
    work(w);
    return NULL;
}

int bare_threads_main(int argc, char **argv, const struct bare_loop *loop)
{
    int n = argc == 4 ? atoi(argv[3]) : 1;
    double seconds = argc >= 3 ? atof(argv[2]) : 0;
    if (argc < 3 || argc > 4 || seconds <= 0 || n < 1 || n > MAX_CONNECTIONS) {
        fprintf(stderr, "usage: %s CONN SECONDS [CONNECTIONS (1..%d)]\n", argv[0],
                MAX_CONNECTIONS);
        return 2;
    }
    struct worker *ws = calloc((size_t)n, sizeof *ws);
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    int opened = 0, status = ws && tid ? 0 : 3;
    for (; opened < n && status == 0; opened++) {
        ws[opened].loop = loop;
        ws[opened].state = loop->open(argv[1], argc == 4 ? opened : -1);
        if (!ws[opened].state)
            status = 3;
    }
    if (status != 0)
        opened--;
    long long start = now_ns(), t = start, cycles = 0;
    if (status == 0 && argc == 3) {
        ws[0].end_ns = start + (long long)(seconds * 1e9);
        work(&ws[0]);
        t = now_ns();
    } else if (status == 0) {
        pthread_barrier_t ready;
        pthread_barrier_init(&ready, NULL, (unsigned)n + 1);
        int started = 0;
        for (; started < n; started++) {
            ws[started].ready = &ready;
            if (pthread_create(&tid[started], NULL, worker_main, &ws[started]) != 0)
                break;
        }
        if (started < n) { /* cannot start them all: the started ones wait forever */
            fprintf(stderr, "bare loop: %d threads of %d started\n", started, n);
            return 3;
        }
        start = now_ns();
        for (int i = 0; i < n; i++)
            ws[i].end_ns = start + (long long)(seconds * 1e9);
        pthread_barrier_wait(&ready);
        for (int i = 0; i < n; i++)
            pthread_join(tid[i], NULL);
        t = now_ns();
        pthread_barrier_destroy(&ready);
    }
    for (int i = 0; i < opened; i++) {
        cycles += ws[i].cycles;
        status = status ? status : ws[i].failed;
        loop->close(ws[i].state);
    }
    if (status == 0)
        printf("cycles=%lld elapsed_ns=%lld\n", cycles, t - start);
    free(ws);
    free(tid);
    return status;
}
