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
Protocol: docs/adapters.md. Run with Debian's /usr/bin/python3
(python3-pymysql).
"""
import os
import sys

import pymysql


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(exc):
    return (type(exc).__name__ + ": " + str(exc)).replace("\n", " ")[:200]


def main():
    env = os.environ
    db = pymysql.connect(host=env["LOCKLAB_MYSQL_HOST"], port=int(env["LOCKLAB_MYSQL_PORT"]),
                         user=env["LOCKLAB_MYSQL_USER"], password=env["LOCKLAB_MYSQL_PASSWORD"],
                         database=env["LOCKLAB_MYSQL_DATABASE"], autocommit=True)
    cur = db.cursor()
    say("ready")
    for line in iter(sys.stdin.readline, ""):
        words = line.split()
        if words == ["quit"]:
            return 0
        try:
            if len(words) == 4 and words[0] == "acquire":
                cur.execute("SELECT GET_LOCK(%s, %s)", (words[1], int(words[3]) / 1000.0))
                got = cur.fetchone()[0]
                say("error GET_LOCK returned NULL" if got is None else
                    "granted" if got == 1 else "timeout")
            elif len(words) == 2 and words[0] == "release":
                cur.execute("SELECT RELEASE_LOCK(%s)", (words[1],))
                say("released" if cur.fetchone()[0] == 1 else "not-owner")
            else:
                say("error unknown request")
        except pymysql.MySQLError as exc:
            say("error " + one_line(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
