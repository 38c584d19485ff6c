"""protocol.py - the adapter protocol's loop (docs/adapters.md), for the
Python adapters that import it (run from adapters/, which Python puts on
the path): read a request per line, hand acquire and release to the
adapter's functions, write the one-line reply they return; an exception of
the library's error classes is the reply `error TEXT`; `quit` or end of
input ends it.
"""
import sys


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(exc):
    return (type(exc).__name__ + ": " + str(exc)).replace("\n", " ")[:200]


def serve(acquire, release, errors, ready="ready"):
    """acquire(key, ttl_ms, wait_ms) and release(key) return the reply;
    errors is the tuple of exception classes that mean `error TEXT`; ready
    is the first line, with the capabilities the adapter declares."""
    say(ready)
    for line in iter(sys.stdin.readline, ""):
        words = line.split()
        if words == ["quit"]:
            return 0
        try:
            if len(words) == 4 and words[0] == "acquire":
                say(acquire(words[1], int(words[2]), int(words[3])))
            elif len(words) == 2 and words[0] == "release":
                say(release(words[1]))
            else:
                say("error unknown request")
        except errors as exc:
            say("error " + one_line(exc))
    return 0
