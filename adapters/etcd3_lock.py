#!/usr/bin/python3
"""etcd3_lock.py - locklab adapter for python-etcd3's Lock (Debian's
python3-etcd3 0.12.0, gRPC to etcd).

One etcd3 client per process, on the one member LOCKLAB_ETCD_HOST and
LOCKLAB_ETCD_PORT name (the library talks to a single endpoint: it does not
move to another member when that one dies). The lock is the library's own
etcd3.Lock, with its lock_prefix (a class attribute, '/locks/' by default)
set to LOCKLAB_ETCD_PREFIX so that its key is locklab/KEY, the key locklab
clears between runs; nothing else of the class is changed. What its source
does (etcd3/locks.py):
  acquire: grant a lease of ttl seconds (TTL_MS rounded up, at least 1),
       then a transaction: put KEY = a uuid of this Lock with the lease if
       KEY's create revision is 0. Taken: watch KEY for its next event (a
       put or a delete, from now, not from the revision read) for at most
       what is left of the timeout, then try again with a new lease; at the
       timeout, False. The lease of a failed try is not revoked (it runs
       out by itself). No keep-alive: the key goes when its lease runs out,
       held or not (lock.refresh() would renew it; nothing calls it).
  release: delete KEY in a transaction if it still holds our uuid; its
       success says whether it did: `released`, else `not-owner`.
No fencing token (the create revision is not kept: a TODO in the source),
not reentrant (a second acquire waits for our own key), so `ready` names no
capability.

Debian's python3-etcd3 0.12.0 meets Debian's python3-tenacity 8.2, which
calls a retry's wait with one retry-state argument; Lock.acquire's wait
takes the old two (the attempt number and the seconds since the first
attempt), so its first contended acquire raises TypeError (upstream
kragniz/python-etcd3 issue 2149). install_tenacity_shim() gives the Lock's
module a tenacity whose retry() calls a two-argument wait the old way: the
library's algorithm itself runs unchanged. With `raw` as first argument the
shim is left out (every contended acquire is then `error TypeError: ...`).
Protocol: docs/adapters.md (its loop: protocol.py). Run with Debian's
/usr/bin/python3.
"""
import inspect
import os
import sys
import types

import etcd3
import etcd3.exceptions
import etcd3.locks
import grpc
import tenacity

from protocol import serve


def install_tenacity_shim():
    def retry(*args, **kw):
        wait = kw.get("wait")
        if wait is not None and len(inspect.signature(wait).parameters) == 2:
            kw["wait"] = lambda state: wait(state.attempt_number, state.seconds_since_start)
        return tenacity.retry(*args, **kw)

    shim = types.ModuleType("tenacity")
    shim.__dict__.update(tenacity.__dict__)
    shim.retry = retry
    etcd3.locks.tenacity = shim


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "shim"
    if mode not in ("shim", "raw"):
        sys.stderr.write("usage: etcd3_lock.py [raw]\n")
        return 2
    if mode == "shim":
        install_tenacity_shim()
    env = os.environ
    client = etcd3.client(host=env["LOCKLAB_ETCD_HOST"], port=int(env["LOCKLAB_ETCD_PORT"]))

    class LabLock(etcd3.Lock):
        lock_prefix = env["LOCKLAB_ETCD_PREFIX"]

    held = {}

    def acquire(key, ttl_ms, wait_ms):
        lock = LabLock(key, ttl=max(1, (ttl_ms + 999) // 1000), etcd_client=client)
        if not lock.acquire(timeout=wait_ms / 1000.0):
            return "timeout"
        held[key] = lock
        return "granted"

    def release(key):
        lock = held.pop(key, None)
        if lock is None:
            return "not-owner"
        return "released" if lock.release() else "not-owner"

    return serve(acquire, release, (etcd3.exceptions.Etcd3Exception, grpc.RpcError, TypeError))


if __name__ == "__main__":
    sys.exit(main())
