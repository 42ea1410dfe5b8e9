#!/usr/bin/env bash
# A PostgreSQL 15 cluster for tests and the demo, under the repository (.pgdata/), run
# as the `postgres` OS user (the server refuses root), listening only on a Unix socket
# in .pgdata/socket.
#
#   scripts/pg-server.sh start | stop | restart | status | env
#
# `env` prints the PGHOST/PGPORT/PGUSER settings for clients (eval "$(scripts/pg-server.sh env)").
# PGMATE_SERVER_OPTIONS adds server settings at start, e.g. "-c shared_buffers=2GB" for a
# benchmark of a large database (the defaults suit the tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
data=${PGMATE_PGDATA:-$root/.pgdata}
socket=$data/socket
port=${PGMATE_PGPORT:-5433}
user=postgres

as_owner() {
  if [ "$(id -un)" = "$user" ]; then "$@"; else runuser -u "$user" -- "$@"; fi
}

# The server's user must be able to reach the data folder: every parent needs o+x.
check_reachable() {
  local d
  d=$(dirname "$data")
  if ! as_owner test -x "$d"; then
    echo "pg-server: the '$user' user cannot reach $d; set PGMATE_PGDATA to a folder it can reach" >&2
    exit 1
  fi
}

start() {
  if [ "$(id -u)" -ne 0 ] && [ "$(id -un)" != "$user" ]; then
    echo "pg-server: run as root (or as $user)" >&2
    exit 1
  fi
  mkdir -p "$data"
  chown "$user": "$data"
  check_reachable
  if [ ! -f "$data/cluster/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$data/cluster" -U "$user" --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  fi
  as_owner mkdir -p "$socket"
  if as_owner "$bin/pg_ctl" -D "$data/cluster" status >/dev/null 2>&1; then
    echo "pg-server: already running (socket $socket, port $port)"
    return
  fi
  # With the extension installed, preload it: its background worker supervises pgmate-worker.
  local preload=""
  [ -f "$(pg_config --pkglibdir)/pgmate.so" ] && preload="-c shared_preload_libraries=pgmate"
  # The server outlives this script: it keeps none of the caller's descriptors (a lock
  # file held around a test run, make's job server), which would stay open as long as it runs.
  local fd
  for fd in $(ls /proc/$$/fd); do
    [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
  done
  as_owner "$bin/pg_ctl" -D "$data/cluster" -l "$data/server.log" -w -t 60 start \
    -o "-c listen_addresses='' -c unix_socket_directories='$socket' -p $port $preload ${PGMATE_SERVER_OPTIONS:-}" >/dev/null
  echo "pg-server: running (socket $socket, port $port, log $data/server.log${preload:+, pgmate preloaded})"
}

stop() {
  if [ -f "$data/cluster/PG_VERSION" ] && as_owner "$bin/pg_ctl" -D "$data/cluster" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$data/cluster" -m fast -w stop >/dev/null
    echo "pg-server: stopped"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  restart) stop; start ;;
  status) as_owner "$bin/pg_ctl" -D "$data/cluster" status ;;
  env) echo "export PGHOST='$socket' PGPORT=$port PGUSER=$user" ;;
  *) echo "usage: $0 start|stop|restart|status|env" >&2; exit 2 ;;
esac
