#!/usr/bin/python3
"""expiring.py - a test adapter for tests/it_adapters.sh: a Redis lock with
a TTL (SET NX PX, polled every 5 ms) whose release is a compare-and-delete,
so it can never remove another client's lock, and which, like
redis-semaphore's release, reports nothing of what it deleted. With `sure`
it answers `released` all the same (what an adapter could only say before
`released ?`): when its lock expired inside and the next holder got it,
that answer is misread as the removal of the next holder's lock (misdel).
With `unsure` it answers `released ?`, and misdel must stay 0.
Protocol: docs/adapters.md. Needs Debian's /usr/bin/python3 (python3-redis).
"""
import os
import sys
import time

import redis

host, port = os.environ["LOCKLAB_REDIS"].rsplit(":", 1)
store = redis.Redis(host=host, port=int(port))
me = "client-" + os.environ["LOCKLAB_CLIENT"]
unlock = store.register_script(
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0")
answer = "released" if sys.argv[1:] == ["sure"] else "released ?"
print("ready", flush=True)
for line in sys.stdin:
    words = line.split()
    if not words or words[0] == "quit":
        break
    if words[0] == "acquire":
        key, ttl_ms, wait_ms = words[1], int(words[2]), int(words[3])
        deadline = time.monotonic() + wait_ms / 1000.0
        reply = "granted"
        while not store.set(key, me, nx=True, px=ttl_ms):
            if time.monotonic() >= deadline:
                reply = "timeout"
                break
            time.sleep(0.005)
        print(reply, flush=True)
    elif words[0] == "release":
        unlock(keys=[words[1]], args=[me])
        print(answer, flush=True)
    else:
        print("error unknown request", flush=True)
