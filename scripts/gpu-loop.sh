#!/usr/bin/env bash
# The whole system on one machine, from the GPU bundle alone: a PostgreSQL 15 server from
# .gpu-bundle/postgresql.tar.xz unpacked into a temporary folder, pgmate's extension in it,
# the given pgmate-worker supervised by it, and the learning loop (CALL pgmate.learn) from
# the network pgmate ships, for a fixed wall time; then one match of the loop's network
# against the start at equal simulations, for an Elo figure with its interval.
#
#   scripts/gpu-loop.sh WORKER DEVICE [--quick] [--seconds S] [--deadline EPOCH]
#
# WORKER: the pgmate-worker program (built on this machine: on a GPU machine, against its
# CUDA LibTorch); DEVICE: cuda or cpu. --quick: a few games of a few simulations (the test
# of the bundle on a machine without a GPU); --seconds: the loop's wall time (default 360,
# quick 45), the final match not counted. --deadline: the time (seconds since the epoch) by
# which every file must be written, as a GPU lease's call ends hard: the loop is shortened
# to leave the final match its reserve, the loop's files are written before the match, and
# the match is stopped between games at the deadline (its finished games are counted).
#
# Nothing of the machine's own PostgreSQL is used: the bundle's binaries run with
# LD_LIBRARY_PATH pointing into the bundle (the worker with the machine's own libraries),
# as an unprivileged user when run as root (the server refuses root). Results under $OUT:
# loop.txt (summary and Elo), learning_log.csv, chart.svg, run.dump (pg_dump of the
# database; the networks' weights and the training checkpoints left out), network.safetensors
# (the loop's network), server.log; loop.txt grows line by line, so a stage cut short keeps
# what it did. Exit status 0 when the loop ran at least one iteration and the match played
# at least one game.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: $0 WORKER DEVICE [--quick] [--seconds S] [--deadline EPOCH]" >&2; exit 2; }
[ $# -ge 2 ] || usage
worker=$(readlink -f "$1")
device=$2
shift 2
quick=0
loop_seconds=
deadline=
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --seconds) [ $# -ge 2 ] || usage; loop_seconds=$2; shift ;;
    --deadline) [ $# -ge 2 ] || usage; deadline=$2; shift ;;
    *) usage ;;
  esac
  shift
done
OUT=${OUT:-$root/build-gpu/out}
mkdir -p "$OUT"
bundle=$root/.gpu-bundle/postgresql.tar.xz
[ -f "$bundle" ] || { echo "gpu-loop: $bundle not found: run 'make gpu-bundle' first" >&2; exit 1; }
[ -x "$worker" ] || { echo "gpu-loop: no pgmate-worker at $worker" >&2; exit 1; }

# The loop's settings: on a GPU hundreds of games at once and a batch that fills it.
if [ $quick = 1 ]; then
  loop_seconds=${loop_seconds:-45}
  options='{"games": 4, "parallel": 4, "simulations": 4, "max_plies": 40, "batch": 64, "steps": 4,
            "arena_interval": 1, "arena_games": 2, "sanity_games": 0, "seed": 1}'
  match_games=4 match_simulations=4 match_plies=40
  match_reserve=30  # seconds kept for the final match and the files when a deadline is given
else
  loop_seconds=${loop_seconds:-360}
  # The batch and learning rate are a CUDA worker's defaults (pgmate.learning_device_defaults).
  # Games end as draws after 200 plies (300 by default), so that the first iteration's
  # self-play and arena fit the loop's time even when many games run long.
  options='{"games": 256, "parallel": 256, "simulations": 64, "max_plies": 200,
            "arena_interval": 1, "arena_games": 64, "sanity_games": 0, "seed": 1}'
  match_games=100 match_simulations=64 match_plies=300
  match_reserve=150
fi
run=whole-system

tmp=$(mktemp -d /tmp/pgmate-loop.XXXXXX)
chmod 755 "$tmp"
pg=$tmp/pg
bin=$pg/usr/lib/postgresql/15/bin
libpath=$pg/usr/lib/x86_64-linux-gnu:$pg/lib/x86_64-linux-gnu
socket=$tmp
port=5439
: >"$OUT/loop.txt"
say() { echo "gpu-loop: $*"; echo "$*" >>"$OUT/loop.txt"; }
# Seconds until the deadline (a large number without one).
until_deadline() { if [ -n "$deadline" ]; then echo $((deadline - $(date +%s))); else echo 1000000; fi; }
finish() {
  [ -x "$bin/pg_ctl" ] && [ -d "$tmp/data" ] && as "$bin/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1
  [ -f "$tmp/server.log" ] && tail -c 2000000 "$tmp/server.log" >"$OUT/server.log"
  rm -rf "$tmp"
}
trap finish EXIT
t_start=$SECONDS

# ---- 1. the bundle, unpacked (Python's tarfile: the GPU image may have no xz)
python3 - "$bundle" "$pg" <<'EOF' || { say "FAIL the bundle did not unpack"; exit 1; }
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    if hasattr(tarfile, "fully_trusted_filter"):
        t.extractall(sys.argv[2], filter="fully_trusted")
    else:
        t.extractall(sys.argv[2])
EOF
# The supervisor starts the worker through this, with the machine's libraries, not the bundle's.
cp "$worker" "$bin/pgmate-worker"
cat >"$bin/pgmate-worker-here" <<EOF
#!/bin/sh
unset LD_LIBRARY_PATH
exec "$bin/pgmate-worker" "\$@"
EOF
chmod 755 "$bin/pgmate-worker-here"

# ---- 2. the server, as an unprivileged user
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
  user=postgres
  if ! id -u "$user" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /bin/sh "$user" >/dev/null 2>&1 || user=nobody
  fi
  chown -R "$user" "$tmp"
fi
as() {
  if [ "$(id -u)" != 0 ]; then
    env LD_LIBRARY_PATH="$libpath" TZ=GMT "$@"
  elif command -v runuser >/dev/null; then
    runuser -u "$user" -- env LD_LIBRARY_PATH="$libpath" TZ=GMT "$@"
  else
    setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups env LD_LIBRARY_PATH="$libpath" TZ=GMT "$@"
  fi
}
if ! as "$bin/initdb" -D "$tmp/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$tmp/initdb.log" 2>&1; then
  cat "$tmp/initdb.log"; say "FAIL initdb with the bundle's binaries"; exit 1
fi
if ! as "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 120 -o "-c listen_addresses='' \
       -c unix_socket_directories='$socket' -c port=$port -c shared_preload_libraries=pgmate -c fsync=off \
       -c pgmate.worker_command='$bin/pgmate-worker-here' -c pgmate.worker_device=$device" start >/dev/null; then
  tail -30 "$tmp/server.log"; say "FAIL the bundle's server did not start"; exit 1
fi
conninfo="host=$socket port=$port user=postgres dbname=loop"
q() { as "$bin/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$socket" -p "$port" -U postgres -d loop -c "$1"; }
as "$bin/createdb" -h "$socket" -p "$port" -U postgres loop || { say "FAIL createdb"; exit 1; }
q "CREATE EXTENSION pgmate" || { say "FAIL CREATE EXTENSION pgmate from the bundle"; exit 1; }
say "server: PostgreSQL $(q "SHOW server_version") from the bundle, pgmate $(q "SELECT extversion FROM pg_extension WHERE extname = 'pgmate'"), as $user"
[ "$(q "SELECT pgmate.wait_for_worker('180 s')")" = t ] || { say "FAIL the worker did not answer"; exit 1; }
say "worker: $(q "SELECT worker_status()->>'device'") ($device asked), input planes made on the $(q "SELECT worker_status()->>'input_encoding'")"
as "$bin/pgmate" import --openings --db "$conninfo" "$pg/usr/share/pgn-extract/eco.pgn" >/dev/null ||
  { say "FAIL pgmate import --openings"; exit 1; }
start=$(q "SELECT pgmate.install_network('default')") || { say "FAIL install_network"; exit 1; }
say "start: network $start, pgmate's shipped network ($(q "SELECT config FROM pgmate.networks WHERE id = $start"))"

# ---- 3. the loop, an iteration a call, until the wall time is spent. Each call is bounded
# by statement_timeout: a cut iteration stays in progress, nothing half-stored. With a
# deadline the loop gives up what the final match's reserve needs.
room=$(($(until_deadline) - match_reserve))
if [ "$room" -lt "$loop_seconds" ]; then
  [ "$room" -ge 10 ] || { say "FAIL $(until_deadline) s left before the deadline: no room for the loop"; exit 1; }
  say "the loop's wall time cut from $loop_seconds s to $room s, to keep $match_reserve s for the final match before the deadline"
  loop_seconds=$room
fi
t0=$SECONDS
iterations=0
longest=0
first=1
while :; do
  left=$((loop_seconds - (SECONDS - t0)))
  [ $left -gt 5 ] || break
  [ $iterations -eq 0 ] || [ $left -gt "$longest" ] || break  # another would not fit
  t=$SECONDS
  call_options='{}'
  [ $first = 1 ] && call_options=$(echo "$options" | tr -d '\n' | sed "s/^{/{\"network\": $start, /")
  if PGOPTIONS="-c statement_timeout=${left}s -c client_min_messages=warning" \
       q "CALL pgmate.learn('$run', 1, '$call_options')" >>"$tmp/learn.log" 2>&1; then
    iterations=$((iterations + 1))
  else
    grep -q "statement timeout" "$tmp/learn.log" || { tail -20 "$tmp/learn.log"; say "FAIL CALL pgmate.learn"; exit 1; }
    say "the wall time ran out inside an iteration (it stays in progress)"
    break
  fi
  first=0
  [ $((SECONDS - t)) -gt "$longest" ] && longest=$((SECONDS - t))
done
loop_time=$((SECONDS - t0))
[ $iterations -gt 0 ] || { say "FAIL no iteration finished in $loop_seconds s"; exit 1; }
say "settings: $(q "SELECT 'games ' || (settings->>'games') || ' of ' || (settings->>'simulations')
    || ' simulations, ' || coalesce(settings->>'max_plies', '300') || ' plies at most, batch ' || (settings->>'batch') || ', lr ' || (settings->>'lr') || ', arena games '
    || (settings->>'arena_games') FROM pgmate.learning_runs WHERE name = '$run'")"
say "loop: $iterations iterations in $loop_time s: $(q "SELECT sum(games) || ' games, ' || sum(positions)
    || ' positions, ' || count(*) FILTER (WHERE decision = 'promoted') || ' promoted'
    FROM pgmate.learning_log WHERE run = '$run'")"
while read -r line; do say "  iteration $line"; done < <(q "SELECT iteration || ': ' || decision || ', '
    || games || ' games, ' || positions || ' positions, policy loss ' || coalesce(policy_loss::text, '-')
    || ', score against the best ' || coalesce(score_vs_best::text, '-')
    FROM pgmate.learning_log WHERE run = '$run' ORDER BY iteration")

# ---- 4. the loop's files, before the match (which a deadline may cut)
read -r best current < <(q "SELECT best_network || ' ' || current_network FROM pgmate.learning_runs WHERE name = '$run'" | tr '|' ' ')
loop_net=$best
what="best network"
if [ "$best" = "$start" ]; then loop_net=$current; what="last candidate (none promoted)"; fi
q "COPY (SELECT * FROM pgmate.learning_log WHERE run = '$run' ORDER BY iteration) TO STDOUT WITH CSV HEADER" >"$OUT/learning_log.csv"
q "SELECT pgmate.learning_chart('$run')" >"$OUT/chart.svg"
q "SELECT encode(weights, 'base64') FROM pgmate.networks WHERE id = $loop_net" | base64 -d >"$OUT/network.safetensors"

# ---- 5. the loop's network (its best; the last candidate when none was promoted) against
# the start, at equal simulations, paired ECO openings. With a deadline, statement_timeout
# stops the match between games in time for the dump; the finished games are counted.
match_timeout=0
[ -z "$deadline" ] || match_timeout=$(($(until_deadline) - 15))
[ "$match_timeout" -ge 0 ] || match_timeout=1
t=$SECONDS
if ! PGOPTIONS="-c statement_timeout=${match_timeout}s" \
     q "CALL pgmate.arena('{\"type\": \"net\", \"network\": $loop_net, \"simulations\": $match_simulations}',
                     '{\"type\": \"net\", \"network\": $start, \"simulations\": $match_simulations}', $match_games,
                     '{\"name\": \"loop against start\", \"openings\": \"eco\", \"seed\": 7, \"parallel\": $match_games,
                       \"max_plies\": $match_plies}')" >/dev/null 2>"$tmp/match.log"; then
  grep -q "statement timeout" "$tmp/match.log" || { tail -5 "$tmp/match.log"; say "FAIL the final match"; exit 1; }
  say "the deadline stopped the final match after $((SECONDS - t)) s"
fi
played=$(q "SELECT coalesce(sum(r.wins + r.draws + r.losses), 0) FROM pgmate.match_results r
   JOIN pgmate.matches m ON m.id = r.match_id WHERE m.name = 'loop against start'")
[ "${played:-0}" -gt 0 ] || { say "FAIL the final match finished no game"; exit 1; }
say "match: network $loop_net ($what) against the start $start, $match_simulations simulations each, $played of $match_games games in $((SECONDS - t)) s: $(q "SELECT r.wins || '/' || r.draws || '/' || r.losses || ', score ' || round(r.score::numeric, 3) || ', Elo ' || round(r.elo::numeric) || ' [' || round(r.elo_lower::numeric) || ', ' || round(r.elo_upper::numeric) || ']'
   FROM pgmate.match_results r JOIN pgmate.matches m ON m.id = r.match_id WHERE m.name = 'loop against start'")"

# ---- 6. the database
as "$bin/pg_dump" -h "$socket" -p "$port" -U postgres -Fc --exclude-table-data=pgmate.networks \
  --exclude-table-data=pgmate.training_checkpoints loop >"$OUT/run.dump" ||
  say "pg_dump failed"
say "total $((SECONDS - t_start)) s; files: loop.txt learning_log.csv chart.svg network.safetensors run.dump server.log"
exit 0
