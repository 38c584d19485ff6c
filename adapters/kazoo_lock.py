#!/usr/bin/python3
"""kazoo_lock.py - locklab adapter for kazoo's kazoo.recipe.lock.Lock.

One KazooClient per process (session timeout from
LOCKLAB_ZK_SESSION_TIMEOUT_MS, else kazoo's 10 s) and one Lock object per
key, kept and reused as kazoo's documentation advises, on the path
/locklab/KEY (where the lab's own ZooKeeper designs keep theirs, so the
harness clears it between runs). acquire(timeout=WAIT) maps LockTimeout to
`timeout`; release() returning False (kazoo knows it holds nothing) is
`not-owner`; True is `released ?`: kazoo deletes its own node and ignores
one already gone (its session expired), so it cannot tell whether the lock
was still ours. Fencing token: the
sequence number of the lock's node plus one (tokens are positive), which
rises across grants as in the lab's zk-sequential. kazoo's Lock is not
reentrant, so `ready` says fencing only. Protocol: docs/adapters.md.
Run with Debian's /usr/bin/python3 (python3-kazoo).
"""
import logging
import os
import sys

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, LockTimeout
from kazoo.handlers.threading import KazooTimeoutError

import protocol


def main():
    logging.basicConfig(level=logging.ERROR)
    session_ms = int(os.environ.get("LOCKLAB_ZK_SESSION_TIMEOUT_MS", "10000"))
    zk = KazooClient(hosts=os.environ["LOCKLAB_ZK"], timeout=session_ms / 1000.0)
    zk.start(timeout=15)
    ident = "client-" + os.environ.get("LOCKLAB_CLIENT", "?")
    locks = {}

    def acquire(key, ttl_ms, wait_ms):
        lock = locks.get(key)
        if lock is None:
            lock = locks[key] = zk.Lock("/locklab/" + key, ident)
        try:
            got = lock.acquire(blocking=True, timeout=wait_ms / 1000.0)
        except LockTimeout:
            got = False
        if not got:
            return "timeout"
        return "granted %d" % (int(lock.node[-10:]) + 1)  # tokens are >= 1

    def release(key):
        lock = locks.get(key)
        return "released ?" if lock is not None and lock.release() else "not-owner"

    protocol.serve(acquire, release, (KazooException, KazooTimeoutError), ready="ready fencing")
    zk.stop()
    zk.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
