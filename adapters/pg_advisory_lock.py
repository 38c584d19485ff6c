#!/usr/bin/python3
"""pg_advisory_lock.py - locklab adapter for PostgreSQL advisory locks, through psycopg2.

One psycopg2 connection per process (autocommit), opened with an empty DSN:
libpq takes the server from PGHOST, PGPORT, PGUSER, PGDATABASE and
PGAPPNAME, which locklab sets (docs/adapters.md). The key is the
session-level advisory lock hashtext(KEY). Two ways to wait, the first
argument:
  wait (the default): SELECT pg_advisory_lock(...) under SET lock_timeout =
       WAIT_MS; the server queues the waiter and wakes it at the unlock, and
       error 55P03 (lock_timeout ran out) is `timeout`;
  try: SELECT pg_try_advisory_lock(...) every POLL_MS (second argument,
       default 50) until WAIT_MS has passed.
A session-level advisory lock has no lease (TTL_MS is ignored): it outlives
any pause of the process and goes only when the session ends (the process
dies, or locklab ends the session between runs). `release KEY` is
pg_advisory_unlock: true `released` (the server removed our lock), false
(this session holds none) `not-owner`. No fencing token; not announced
reentrant, so `ready` names no capability. Protocol: docs/adapters.md (its
loop: protocol.py). Run with Debian's
/usr/bin/python3 (python3-psycopg2).
"""
import sys
import time

import psycopg2
import psycopg2.errors

from protocol import serve


def acquire_wait(cur, key, wait_ms):
    if wait_ms <= 0:  # lock_timeout 0 would mean no bound at all
        return acquire_try(cur, key, 0, 0)
    cur.execute("SET lock_timeout = %s", (wait_ms,))
    try:
        cur.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
        return "granted"
    except psycopg2.errors.LockNotAvailable:
        return "timeout"


def acquire_try(cur, key, wait_ms, poll_ms):
    deadline = time.monotonic() + wait_ms / 1000.0
    while True:
        cur.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,))
        if cur.fetchone()[0]:
            return "granted"
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        time.sleep(min(left, poll_ms / 1000.0))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "wait"
    poll_ms = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    if mode not in ("wait", "try") or poll_ms < 1:
        sys.stderr.write("usage: pg_advisory_lock.py [wait | try [POLL_MS]]\n")
        return 2
    db = psycopg2.connect("")
    db.autocommit = True
    cur = db.cursor()

    def acquire(key, ttl_ms, wait_ms):
        if mode == "wait":
            return acquire_wait(cur, key, wait_ms)
        return acquire_try(cur, key, wait_ms, poll_ms)

    def release(key):
        cur.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
        return "released" if cur.fetchone()[0] else "not-owner"

    return serve(acquire, release, (psycopg2.Error,))


if __name__ == "__main__":
    sys.exit(main())
