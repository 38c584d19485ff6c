#!/usr/bin/python3
"""mysql_get_lock.py - locklab adapter for MariaDB's GET_LOCK, through PyMySQL.

One PyMySQL connection per process (autocommit), to the server, login and
database locklab names in LOCKLAB_MYSQL_HOST, _PORT, _USER, _PASSWORD and
_DATABASE. `acquire KEY TTL_MS WAIT_MS` is SELECT GET_LOCK(KEY, WAIT_MS /
1000): 1 is `granted`, 0 `timeout` (the server waited that long), NULL an
error. A GET_LOCK lock is the session's: it has no lease (TTL_MS is
ignored), outlives any pause of the process, and goes only when the session
ends (the process dies, or locklab ends the session between runs).
`release KEY` is SELECT RELEASE_LOCK(KEY): 1 `released` (the server removed
our lock), 0 (another session holds it) or NULL (nobody does) `not-owner`.
No fencing token; not announced reentrant, so `ready` names no capability.
Protocol: docs/adapters.md (its loop: protocol.py). Run with Debian's /usr/bin/python3
(python3-pymysql).
"""
import os
import sys

import pymysql

from protocol import serve


def main():
    env = os.environ
    db = pymysql.connect(host=env["LOCKLAB_MYSQL_HOST"], port=int(env["LOCKLAB_MYSQL_PORT"]),
                         user=env["LOCKLAB_MYSQL_USER"], password=env["LOCKLAB_MYSQL_PASSWORD"],
                         database=env["LOCKLAB_MYSQL_DATABASE"], autocommit=True)
    cur = db.cursor()

    def acquire(key, ttl_ms, wait_ms):
        cur.execute("SELECT GET_LOCK(%s, %s)", (key, wait_ms / 1000.0))
        got = cur.fetchone()[0]
        return "error GET_LOCK returned NULL" if got is None else \
            "granted" if got == 1 else "timeout"

    def release(key):
        cur.execute("SELECT RELEASE_LOCK(%s)", (key,))
        return "released" if cur.fetchone()[0] == 1 else "not-owner"

    return serve(acquire, release, (pymysql.MySQLError,))


if __name__ == "__main__":
    sys.exit(main())
