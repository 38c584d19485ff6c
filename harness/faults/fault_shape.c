/*
 * fault_shape.c - the partition shapes that need no listing (a fault
 * entry's shape: fault_spec.h), drawn from the run's hosts as Jepsen's
 * nemeses draw them from a cluster's nodes: shuffle, then split.
 *
 *   majority-minority: the smallest strict majority of the hosts (n/2+1)
 *     against the rest, as a partition that leaves one side able to elect;
 *   bridge: two halves that cannot see each other and one host, the
 *     bridge, that sees both: the cut is non-transitive (a reaches b, b
 *     reaches c, a does not reach c).
 *
 * The shuffle is seeded (splitmix64, Fisher-Yates), so a seed gives the
 * same split on the same hosts every time; a pinned host (minority: or
 * middle:) is taken out before the shuffle and put where it was pinned.
 * Pure arithmetic on host numbers: fault_partition.c resolves the pinned
 * member, cuts, probes and records.
 */
#include "fault_engine.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int fault_shape_split(int shape, int n, int pin, int seed, unsigned side[2], int *bridge)
{
    int order[SCN_MAX_HOSTS], k = 0;
    uint64_t state = (uint64_t)seed;
    *bridge = -1;
    side[0] = side[1] = 0;
    if (n < 3 || n > SCN_MAX_HOSTS || pin >= n)
        return -1;
    for (int h = 0; h < n; h++)
        if (h != pin)
            order[k++] = h;
    for (int i = k - 1; i > 0; i--) {
        int j = (int)(splitmix64(&state) % (uint64_t)(i + 1));
        int t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int next = 0;
    if (shape == FAULT_SHAPE_BRIDGE) {
        *bridge = pin >= 0 ? pin : order[next++];
        int half = (n - 1) / 2; /* the first half; the second has the rest */
        for (int i = 0; next < k; i++, next++)
            side[i < half ? 0 : 1] |= 1u << order[next];
        return 0;
    }
    if (shape != FAULT_SHAPE_MAJORITY_MINORITY)
        return -1;
    int minority = n - (n / 2 + 1);
    if (pin >= 0) {
        side[0] |= 1u << pin;
        minority--;
    }
    for (int i = 0; next < k; i++, next++)
        side[i < minority ? 0 : 1] |= 1u << order[next];
    return 0;
}
