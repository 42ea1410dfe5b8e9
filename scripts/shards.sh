#!/usr/bin/env bash
# A cluster of local PostgreSQL servers for pgmate's game database over shards: a
# coordinator and N shards, each a server of its own (scripts/pg-server.sh) under
# .pgdata-shards/ with its own socket and port (coordinator 5450, shard k 5451 + k).
#
#   scripts/shards.sh up N      start them; make the database pgmate_cluster on each, pgmate on
#                               every shard (shard k gives game ids equal to k modulo N), and
#                               pgmate_cluster on the coordinator with the shards added
#   scripts/shards.sh down      stop them (their data stays for the next `up`, which makes the
#                               databases anew)
#   scripts/shards.sh conninfo coordinator|K   a connection string for psql or pgmate --db
#
# N is a power of two (PL/Proxy's rule). docs/gamedb.md says how to put the shards on other
# machines: the same steps, with their connection strings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${PGMATE_SHARDS_PGDATA:-$root/.pgdata-shards}
first_port=${PGMATE_SHARDS_PORT:-5450}
db=pgmate_cluster

server() {  # NAME PORT ARGS...: scripts/pg-server.sh for one server of the cluster
  local name=$1 port=$2
  shift 2
  # The shards and the coordinator search; none runs networks: no worker of their own.
  PGMATE_PGDATA="$base/$name" PGMATE_PGPORT=$port PGMATE_SERVER_OPTIONS="-c pgmate.worker_autostart=off" \
    "$root/scripts/pg-server.sh" "$@"
}
conninfo() {  # NAME PORT
  echo "host=$base/$1/socket port=$2 dbname=$db user=postgres"
}
sql() {  # NAME PORT SQL
  psql -X -q -v ON_ERROR_STOP=1 "$(conninfo "$1" "$2")" -c "$3"
}
servers() {  # the servers there are: NAME PORT per line
  echo "coordinator $first_port"
  local k
  for k in $(ls "$base" 2>/dev/null | sed -n 's/^shard\([0-9]\+\)$/\1/p' | sort -n); do
    echo "shard$k $((first_port + 1 + k))"
  done
}

case "${1:-}" in
  up)
    n=${2:-}
    if ! [[ "$n" =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ $((n & (n - 1))) -ne 0 ]; then
      echo "shards: up N needs N a power of two (1, 2, 4, ...), not '${n}'" >&2
      exit 2
    fi
    mkdir -p "$base"
    # shards of an earlier, larger cluster are stopped and left out
    for k in $(ls "$base" | sed -n 's/^shard\([0-9]\+\)$/\1/p'); do
      if [ "$k" -ge "$n" ]; then server "shard$k" $((first_port + 1 + k)) stop >/dev/null 2>&1 || true; rm -rf "${base:?}/shard$k"; fi
    done
    infos=()
    for k in $(seq 0 $((n - 1))); do
      port=$((first_port + 1 + k))
      server "shard$k" "$port" start >/dev/null
      psql -X -q "$(conninfo "shard$k" "$port" | sed "s/dbname=$db/dbname=postgres/")" \
        -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
      sql "shard$k" "$port" "SET client_min_messages = warning; CREATE EXTENSION pgmate"
      # ids k, k + N, k + 2N, ...: the games this shard gives ids to are its own
      sql "shard$k" "$port" "ALTER TABLE pgmate.games ALTER COLUMN id SET INCREMENT BY $n
                             SET START WITH $([ "$k" -eq 0 ] && echo "$n" || echo "$k") RESTART"
      infos+=("'$(conninfo "shard$k" "$port")'")
    done
    server coordinator "$first_port" start >/dev/null
    psql -X -q "$(conninfo coordinator "$first_port" | sed "s/dbname=$db/dbname=postgres/")" \
      -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db" >/dev/null
    sql coordinator "$first_port" "SET client_min_messages = warning; CREATE EXTENSION pgmate_cluster CASCADE"
    sql coordinator "$first_port" "SELECT pgmate_cluster.add_shards(ARRAY[$(IFS=,; echo "${infos[*]}")])" >/dev/null
    echo "shards: the coordinator at $(conninfo coordinator "$first_port")"
    for k in $(seq 0 $((n - 1))); do echo "shards: shard $k at $(conninfo "shard$k" $((first_port + 1 + k)))"; done
    ;;
  down)
    servers | while read -r name port; do
      [ -d "$base/$name" ] && server "$name" "$port" stop >/dev/null 2>&1 || true
    done
    echo "shards: stopped"
    ;;
  conninfo)
    case "${2:-}" in
      coordinator) conninfo coordinator "$first_port" ;;
      [0-9]*) conninfo "shard$2" $((first_port + 1 + $2)) ;;
      *) echo "shards: conninfo coordinator|K" >&2; exit 2 ;;
    esac
    ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
