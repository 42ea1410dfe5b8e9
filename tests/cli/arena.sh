#!/usr/bin/env bash
# pgmate arena against a live PostgreSQL database: a match stored and resumed by name, a
# client killed inside a game's transaction and at random moments (whole games only, and
# the match completes afterwards with each game index once), a second client on the same
# match, an SPRT that stops a match early, bad specs.
#
#   tests/cli/arena.sh PGMATE DBNAME
#
# Prints "arena: N passed, M failed" and exits 1 on any failure.
set -u

. "$(dirname "$0")/client_test.sh" "$@"  # PGMATE, DB, the checks, TMP
app="pgmate_arena_test_$$"  # the background clients' application_name (stop_bg)
db="dbname=$DB"
tag="t$$"
q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null
games_of() { q "SELECT count(*) FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id WHERE m.name = '$1'"; }
distinct_of() {
  q "SELECT count(DISTINCT g.arena->>'index') FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id
     WHERE m.name = '$1'"
}

# ---- a match, then more games of it by name
name="$tag-basic"
out=$("$PGMATE" arena --db "$db" --name "$name" --games 4 --parallel 2 --max-plies 60 --quiet mcts:30 random 2>&1)
check "basic: exit" "$?" 0
check_match "basic: last line" "$(printf '%s\n' "$out" | tail -n 1)" '^mcts:30 vs random: W/D/L [0-9]+/[0-9]+/[0-9]+, score'
check "basic: games stored" "$(games_of "$name")" 4
check "basic: status" "$(q "SELECT status FROM pgmate.matches WHERE name = '$name'")" finished
out=$("$PGMATE" arena --db "$db" --name "$name" --games 6 --parallel 2 --max-plies 60 --quiet mcts:30 random 2>&1)
check "resume: first line" "$(printf '%s\n' "$out" | head -n 1)" \
  "match $name: mcts:30 vs random, 4 of 6 games stored, playing 2"
check "resume: games" "$(games_of "$name")" 6
check "resume: each index once" "$(distinct_of "$name")" 6
"$PGMATE" arena --db "$db" --name "$name" --games 6 --max-plies 60 --quiet mcts:31 random >"$TMP/out" 2>"$TMP/err"
check "other players: exit" "$?" 2
check_match "other players: message" "$(cat "$TMP/err")" "exists with another player A"

# ---- killed inside a game's transaction: the game is never seen
name="$tag-stall"
PGMATE_ARENA_STALL_MS=5000 "$PGMATE" arena --db "$db application_name=$app" --name "$name" --games 4 --parallel 1 \
  --max-plies 20 --quiet mcts:8 random >/dev/null 2>&1 &
bg_pid=$!
disown "$bg_pid"
in_tx=0
for _ in $(seq 1 300); do
  in_tx=$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' AND state = 'idle in transaction'
            AND query LIKE 'INSERT INTO pgmate.games%'")
  [ "$in_tx" = 1 ] && break
  sleep 0.1
done
check "kill in transaction: client inside the transaction" "$in_tx" 1
stop_bg
check "kill in transaction: no game kept" "$(games_of "$name")" 0
out=$("$PGMATE" arena --db "$db" --name "$name" --games 4 --parallel 1 --max-plies 20 --quiet mcts:8 random 2>&1)
check "kill in transaction: rerun" "$(printf '%s\n' "$out" | head -n 1)" \
  "match $name: mcts:8 vs random, 0 of 4 games stored, playing 4"
check "kill in transaction: completed" "$(games_of "$name")" 4

# ---- one client per match
name="$tag-busy"
"$PGMATE" arena --db "$db application_name=$app" --name "$name" --games 100000 --parallel 2 --quiet mcts:8 random \
  >/dev/null 2>&1 &
bg_pid=$!
disown "$bg_pid"
for _ in $(seq 1 100); do
  [ "$(q "SELECT count(*) FROM pgmate.client_claims c JOIN pg_stat_activity a ON a.pid = c.holder_pid
          WHERE a.application_name = '$app'")" = 1 ] && break
  sleep 0.1
done
"$PGMATE" arena --db "$db" --name "$name" --games 100000 --parallel 2 --quiet mcts:8 random >"$TMP/out" 2>"$TMP/err"
check "busy match: exit" "$?" 1
check_match "busy match: message" "$(cat "$TMP/err")" "is being played by another client"
stop_bg

# ---- killed at random moments: whole games, each index once, and it completes
name="$tag-random"
for second in 0 1 1; do
  "$PGMATE" arena --db "$db application_name=$app" --name "$name" --games 1000 --parallel 4 --max-plies 60 \
    --quiet mcts:20 random >/dev/null 2>&1 &
  bg_pid=$!
  disown "$bg_pid"
  sleep "$second.$((RANDOM % 10))"
  stop_bg
done
stored=$(games_of "$name")
echo "     ($stored games of $name stored before the kills)"
check_match "random kills: games kept" "$stored" '^[1-9][0-9]*$'
check "random kills: each index once" "$(distinct_of "$name")" "$stored"
target=$((stored + 3))
"$PGMATE" arena --db "$db" --name "$name" --games "$target" --parallel 4 --max-plies 60 --quiet mcts:20 random \
  >/dev/null 2>&1
check "random kills: completed" "$(games_of "$name")" "$target"
check "random kills: indexes 0..N-1" \
  "$(q "SELECT count(*) FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id
        WHERE m.name = '$name' AND (g.arena->>'index')::int BETWEEN 0 AND $target - 1")" "$target"

# ---- an SPRT that decides stops the match early
name="$tag-sprt"
out=$("$PGMATE" arena --db "$db" --name "$name" --games 400 --parallel 8 --max-plies 200 --sprt 0,200 --quiet \
  mcts:100 random 2>&1)
check_match "sprt: verdict line" "$out" 'SPRT \[0.0, 200.0\]: LLR [0-9.]+ .*: H1 accepted'
check "sprt: status" "$(q "SELECT status FROM pgmate.matches WHERE name = '$name'")" sprt_h1
check_match "sprt: stopped early" "$(games_of "$name")" '^[0-9]{1,2}$'
check "sprt: the view agrees" "$(q "SELECT sprt_verdict FROM pgmate.match_results WHERE name = '$name'")" H1

# ---- bad input
"$PGMATE" arena --db "$db" --games 2 mcts:x random >"$TMP/out" 2>"$TMP/err"
check "bad spec: exit" "$?" 2
check_match "bad spec: message" "$(cat "$TMP/err")" 'player spec "mcts:x"'
"$PGMATE" arena --db "$db" --games 2 "net:999999:4" random >"$TMP/out" 2>"$TMP/err"
check "unknown network: exit" "$?" 2
check_match "unknown network: message" "$(cat "$TMP/err")" 'no network with id 999999'
"$PGMATE" arena --db "$db" --name "$tag-missing" --games 2 uci:/nonexistent/engine random >"$TMP/out" 2>"$TMP/err"
check "missing engine: exit" "$?" 1
check_match "missing engine: message" "$(cat "$TMP/err")" 'cannot be started'
check "missing engine: nothing stored" "$(q "SELECT count(*) FROM pgmate.matches WHERE name = '$tag-missing'")" 0

q "DELETE FROM pgmate.matches WHERE name LIKE '$tag-%'" >/dev/null
echo "arena: $passed passed, $failed failed"
[ "$failed" = 0 ]
