#!/usr/bin/env bash
# UCI engines that misbehave, against CALL pgmate.arena and pgmate arena on a live server:
# an engine that floods its output (in the handshake or while it should move) or stops
# reading its input ends the call at statement_timeout, cancel or pg_terminate_backend
# within about two seconds; no engine process outlives its match, its backend or its client
# (a wrapper script's children included); engines inherit no descriptor of the backend;
# engine text that is not UTF-8 is stored escaped, and the database goes through
# pg_dump | pg_restore.
#
#   tests/cli/engines.sh PGMATE DBNAME
#
# Prints "engines: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 PGMATE DBNAME" >&2
  exit 2
fi
PGMATE=$1
DB=$2

. "$(dirname "$0")/checks.sh"

# The server's OS user runs the engines: they live in a folder it can read, and write
# what they report into one it can write.
TMP=$(mktemp -d)
chmod 755 "$TMP"
cp "$(dirname "$0")/../arena/fake_uci.sh" "$TMP/fake_uci.sh"
chmod 755 "$TMP/fake_uci.sh"
mkdir "$TMP/out"
chmod 1777 "$TMP/out"
bg_psql=
cleanup() {
  [ -n "$bg_psql" ] && kill -9 "$bg_psql" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
app="pgmate_engines_test_$$"
tag="e$$"
q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null

now_ms() { date +%s%3N; }
spec() { printf '"uci:/bin/sh %s/fake_uci.sh %s"' "$TMP" "$*"; }  # a player spec as a JSON string
# The process groups of the engines a process runs: its children, each the leader of its
# own group.
engine_groups() { pgrep -P "$1" | sort -u; }
# How many processes (zombies aside) are still running in these process groups.
alive_in_groups() {
  local groups=" $* "
  ps -eo pgid=,stat= | awk -v groups="$groups" 'index(groups, " " $1 " ") && $2 !~ /^Z/' | wc -l
}
# Waits up to 2 s for the groups to be empty; prints what is left.
left_in_groups() {
  local left
  for _ in $(seq 1 40); do
    left=$(alive_in_groups "$@")
    [ "$left" = 0 ] && break
    sleep 0.05
  done
  echo "$left"
}
backend_pid() { q "SELECT pid FROM pg_stat_activity WHERE application_name = '$app'"; }
# Waits up to 5 s until process PID (or the backend of the background call) runs N
# engines; sets groups.
await_engines() {
  local pid=$1 n=$2
  groups=
  for _ in $(seq 1 100); do
    [ "$pid" = backend ] && pid=$(backend_pid)
    [ -z "$pid" ] && pid=backend
    [ "$pid" != backend ] && groups=$(engine_groups "$pid")
    [ "$(printf '%s\n' $groups | grep -c .)" -ge "$n" ] && break
    sleep 0.05
  done
}
# Starts CALL pgmate.arena in the background (bg_psql; its session has application_name=$app,
# and the settings in $settings) and waits until it runs N engines.
start_call() {
  local n=$1 call=$2
  PGOPTIONS="${settings:-}" psql -X -q -d "dbname=$DB application_name=$app" -c "$call" >"$TMP/bg.out" 2>&1 &
  bg_psql=$!
  await_engines backend "$n"
}
# Waits up to 10 s for the background psql; prints how many ms that took.
wait_bg_ms() {
  local t0 gone=0
  t0=$(now_ms)
  for _ in $(seq 1 200); do
    if ! kill -0 "$bg_psql" 2>/dev/null; then gone=1; break; fi
    sleep 0.05
  done
  [ "$gone" = 1 ] || kill -9 "$bg_psql" 2>/dev/null
  wait "$bg_psql" 2>/dev/null
  bg_psql=
  echo $(($(now_ms) - t0))
}

# ---- statement_timeout (1 s) ends a flooding handshake, an info flood and a deaf engine
timeout_call() {  # NAME PLAYER_A_SQL
  local t0 ms err
  t0=$(now_ms)
  err=$(psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET statement_timeout = '1s'" \
    -c "CALL pgmate.arena($2, '\"random\"', 2, '{\"name\": \"$tag-$1\", \"max_plies\": 20}')" 2>&1 >/dev/null)
  ms=$(($(now_ms) - t0))
  echo "     $1: the call ended $ms ms after it began (statement_timeout 1000 ms)"
  check_match "$1: statement timeout" "$err" "canceling statement due to statement timeout"
  check "$1: within 3 s" "$([ "$ms" -lt 3000 ] && echo yes || echo "no ($ms ms)")" yes
}
timeout_call handshake-flood "'$(spec hsflood)'"
timeout_call info-flood "'$(spec flood)'"
timeout_call deaf "jsonb_build_object('type', 'uci', 'command', '/bin/sh $TMP/fake_uci.sh deaf',
  'OptA', repeat('x', 40000), 'OptB', repeat('y', 40000), 'OptC', repeat('z', 40000))"

# ---- cancel during an info flood
start_call 2 "CALL pgmate.arena('$(spec flood)', '\"random\"', 2, '{\"name\": \"$tag-cancel\", \"max_plies\": 20}')"
check "cancel: engines running" "$([ -n "$groups" ] && echo yes)" yes
sleep 0.3
check "cancel: sent" "$(q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'")" t
ms=$(wait_bg_ms)
echo "     cancel: the call ended $ms ms after pg_cancel_backend"
check "cancel: within 2 s" "$([ "$ms" -lt 2000 ] && echo yes || echo "no ($ms ms)")" yes
check_match "cancel: message" "$(cat "$TMP/bg.out")" "canceling statement due to user request"
check "cancel: no engine left" "$(left_in_groups $groups)" 0

# ---- a wrapper script (its engine stuck, a helper beside it) ended by statement_timeout
settings="-c statement_timeout=1500" start_call 2 \
  "CALL pgmate.arena('$(spec wrapper)', '\"random\"', 2, '{\"name\": \"$tag-wrapper\", \"parallel\": 2}')"
for _ in $(seq 1 20); do [ "$(alive_in_groups $groups)" -ge 4 ] && break; sleep 0.05; done
check "wrapper: engines and helpers running" "$([ "$(alive_in_groups $groups)" -ge 4 ] && echo yes)" yes
wait_bg_ms >/dev/null
check_match "wrapper: statement timeout" "$(cat "$TMP/bg.out")" "canceling statement due to statement timeout"
check "wrapper: no process of the engines' groups left" "$(left_in_groups $groups)" 0

# ---- pg_terminate_backend: the backend ends (FATAL, no unwinding) and its engines with it
start_call 2 "CALL pgmate.arena('$(spec wrapper)', '\"random\"', 2, '{\"name\": \"$tag-terminate\", \"parallel\": 2}')"
backend=$(backend_pid)
check "terminate: engines running" "$([ -n "$groups" ] && echo yes)" yes
check "terminate: sent" "$(q "SELECT pg_terminate_backend($backend)")" t
ms=$(wait_bg_ms)
echo "     terminate: the client saw the end $ms ms after pg_terminate_backend"
check "terminate: within 2 s" "$([ "$ms" -lt 2000 ] && echo yes || echo "no ($ms ms)")" yes
check "terminate: no process of the engines' groups left" "$(left_in_groups $groups)" 0

# ---- an info flood under pg_terminate_backend
start_call 2 "CALL pgmate.arena('$(spec flood)', '\"random\"', 2, '{\"name\": \"$tag-terminate-flood\"}')"
sleep 0.3
check "terminate flood: sent" "$(q "SELECT pg_terminate_backend($(backend_pid))")" t
ms=$(wait_bg_ms)
echo "     terminate flood: the client saw the end $ms ms after pg_terminate_backend"
check "terminate flood: within 2 s" "$([ "$ms" -lt 2000 ] && echo yes || echo "no ($ms ms)")" yes
check "terminate flood: no engine left" "$(left_in_groups $groups)" 0

# ---- the client: pgmate arena killed by SIGTERM takes its engines along
"$PGMATE" arena --pgn /dev/null --games 2 --parallel 2 --quiet "uci:/bin/sh $TMP/fake_uci.sh wrapper" random \
  >/dev/null 2>&1 &
bg_psql=$!
await_engines "$bg_psql" 2
check "client: engines running" "$([ -n "$groups" ] && echo yes)" yes
kill -TERM "$bg_psql"
wait_bg_ms >/dev/null
check "client: no process of the engines' groups left" "$(left_in_groups $groups)" 0

# ---- engines inherit their pipes and /dev/null, not the backend's socket or data files
q "CALL pgmate.arena('$(spec fds "$TMP/out/fds")', '\"random\"', 2, '{\"name\": \"$tag-fds\", \"max_plies\": 4}')" \
  >/dev/null 2>&1
fds=$(cat "$TMP/out/fds" 2>/dev/null)
check_match "fds: listed" "$fds" "fd 0 pipe:"
check "fds: no socket" "$(printf '%s\n' "$fds" | grep -c 'socket:')" 0
check "fds: no data file" "$(printf '%s\n' "$fds" | grep -c '/base/\|/global/\|pg_wal')" 0

# ---- engine text that is not UTF-8: stored escaped, shown escaped, dumped and restored
for mode in badname badmove; do
  out=$(psql -X -q -v ON_ERROR_STOP=1 -d "$DB" \
    -c "CALL pgmate.arena('$(spec $mode)', '\"random\"', 2, '{\"name\": \"$tag-$mode\", \"max_plies\": 20}')" 2>&1)
  check "$mode: call" "$?" 0
  check_match "$mode: notice escaped" "$out" '\\xff\\xfe'
done
bad="SELECT count(*) FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id
     WHERE m.name IN ('$tag-badname', '$tag-badmove') AND strpos(g.termination, '\\xff\\xfe') > 0"
check "not UTF-8: four forfeits stored escaped" "$(q "$bad")" 4
check_match "not UTF-8: the name" \
  "$(q "SELECT termination FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id
        WHERE m.name = '$tag-badname' LIMIT 1")" 'Evil\\xff\\xfeEngine'
check "not UTF-8: every stored text converts" \
  "$(q "SELECT count(*) FROM pgmate.games
        WHERE convert_from(convert_to(termination || tags::text, 'UTF8'), 'UTF8') IS NOT NULL")" \
  "$(q "SELECT count(*) FROM pgmate.games")"
restore_db="${DB}_restored"
pg_dump -Fc -f "$TMP/dump" "$DB" 2>"$TMP/dump.err"
check "dump: exit" "$?" 0
dropdb --if-exists "$restore_db" 2>/dev/null
createdb "$restore_db"
pg_restore -d "$restore_db" "$TMP/dump" 2>"$TMP/restore.err"
check "restore: exit" "$?" 0
check "restore: the forfeits restored" "$(psql -X -q -A -t -d "$restore_db" -c "$bad")" 4
check "restore: every game restored" "$(psql -X -q -A -t -d "$restore_db" -c "SELECT count(*) FROM pgmate.games")" \
  "$(q "SELECT count(*) FROM pgmate.games")"
dropdb "$restore_db"

echo "engines: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
