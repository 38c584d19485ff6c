#!/usr/bin/python3
"""redis_py_lock.py - locklab adapter for redis-py's redis.lock.Lock.

Drives the library exactly as an application would: one Redis client per
process, Lock(name=KEY, timeout=TTL, sleep=0.1, blocking_timeout=WAIT) per
acquire (redis-py's defaults but for the two the request gives), release()
whose LockNotOwnedError is the protocol's not-owner. redis-py has no fencing
token and its Lock is not reentrant, so `ready` names no capability.
Protocol: docs/adapters.md. Run with Debian's /usr/bin/python3 (python3-redis).
"""
import os
import sys

import redis
from redis.exceptions import LockError, LockNotOwnedError, RedisError


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(exc):
    return (type(exc).__name__ + ": " + str(exc)).replace("\n", " ")[:200]


def main():
    host, port = os.environ["LOCKLAB_REDIS"].rsplit(":", 1)
    client = redis.Redis(host=host, port=int(port))
    client.ping()
    held = {}
    say("ready")
    for line in iter(sys.stdin.readline, ""):
        words = line.split()
        if words == ["quit"]:
            return 0
        try:
            if len(words) == 4 and words[0] == "acquire":
                key, ttl_ms, wait_ms = words[1], int(words[2]), int(words[3])
                lock = client.lock(key, timeout=ttl_ms / 1000.0, sleep=0.1,
                                   blocking_timeout=wait_ms / 1000.0, thread_local=False)
                if lock.acquire():
                    held[key] = lock
                    say("granted")
                else:
                    say("timeout")
            elif len(words) == 2 and words[0] == "release":
                lock = held.pop(words[1], None)
                if lock is None:
                    say("error release of a key this adapter does not hold")
                    continue
                try:
                    lock.release()
                    say("released")
                except LockNotOwnedError:
                    say("not-owner")
            else:
                say("error unknown request")
        except (RedisError, LockError) as exc:
            say("error " + one_line(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
