#!/bin/sh
# leak.sh mysql|postgres - an adapter for tests/it_adapters_db.sh that
# leaves a lock behind, as a session the server still has after its run:
# at its first acquire it starts a database client in the background
# (mariadb, or psql) that takes the run's KEY as a session lock of
# locklab's (database locklab; application_name locklab from PGAPPNAME) the
# way the shipped adapters name it, then sleeps. That client is its own
# child and outlives the adapter; only locklab's clearing before the next
# run ends its session, and the client with it. Its pid goes to leak.pid
# beside this file, and the key to leak.held once the server shows the
# lock held (it waits up to 5 s for that); then it grants (one client per
# run: no exclusion needed).
here=$(cd "$(dirname "$0")" && pwd)
held() {
    case $1 in
    mysql) mariadb -N -h "$LOCKLAB_MYSQL_HOST" -P "$LOCKLAB_MYSQL_PORT" -u "$LOCKLAB_MYSQL_USER" \
               -e "SELECT IS_USED_LOCK('$2') IS NOT NULL" ;;
    postgres) psql -Atc "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted" ;;
    esac
}
echo ready
started=""
while read -r verb key rest; do
    case $verb in
    acquire)
        if [ -z "$started" ]; then
            started=1
            case $1 in
            mysql) mariadb -h "$LOCKLAB_MYSQL_HOST" -P "$LOCKLAB_MYSQL_PORT" \
                       -u "$LOCKLAB_MYSQL_USER" "$LOCKLAB_MYSQL_DATABASE" \
                       -e "SELECT GET_LOCK('$key', 5); SELECT SLEEP(120)" >/dev/null 2>&1 & ;;
            postgres) psql -c "SELECT pg_advisory_lock(hashtext('$key'))" \
                           -c "SELECT pg_sleep(120)" >/dev/null 2>&1 & ;;
            esac
            echo $! > "$here/leak.pid"
            i=0
            while [ "$(held "$1" "$key")" != 1 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
            [ "$(held "$1" "$key")" = 1 ] && echo "$key" > "$here/leak.held"
        fi
        echo granted ;;
    release) echo released ;;
    quit) exit 0 ;;
    esac
done
