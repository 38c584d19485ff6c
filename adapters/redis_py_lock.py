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

import protocol


def main():
    host, port = os.environ["LOCKLAB_REDIS"].rsplit(":", 1)
    client = redis.Redis(host=host, port=int(port))
    client.ping()
    held = {}

    def acquire(key, ttl_ms, wait_ms):
        lock = client.lock(key, timeout=ttl_ms / 1000.0, sleep=0.1,
                           blocking_timeout=wait_ms / 1000.0, thread_local=False)
        if not lock.acquire():
            return "timeout"
        held[key] = lock
        return "granted"

    def release(key):
        lock = held.pop(key, None)
        if lock is None:
            return "error release of a key this adapter does not hold"
        try:
            lock.release()
            return "released"
        except LockNotOwnedError:
            return "not-owner"

    return protocol.serve(acquire, release, (RedisError, LockError))


if __name__ == "__main__":
    sys.exit(main())
