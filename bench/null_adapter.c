/*
 * null_adapter.c - the trivial adapter (docs/adapters.md): it grants every
 * acquire at once and releases at once, talking to no server. `locklab
 * bench adapter` drives it to measure what the protocol itself costs (two
 * pipe writes, two reads and the parsing, per exchange), in C so that the
 * figure is the protocol's and not an interpreter's. It answers the way a
 * real adapter must: `ready` first, one reply line per request, flushed;
 * exit 0 on `quit` or at the end of its input. It ignores the lock's key,
 * so it must never be used where exclusion matters.
 */
#include <stdio.h>
#include <string.h>

int main(void)
{
    char line[1024];

    setvbuf(stdout, NULL, _IOLBF, 0);
    puts("ready");
    while (fgets(line, sizeof line, stdin)) {
        if (!strncmp(line, "acquire ", 8))
            puts("granted");
        else if (!strncmp(line, "release ", 8))
            puts("released");
        else if (!strcmp(line, "quit\n"))
            return 0;
        else
            printf("error unknown request\n");
    }
    return 0;
}
