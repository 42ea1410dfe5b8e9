#!/usr/bin/env bash
# pgmate selfplay (and a pgmate play smoke test) against a live PostgreSQL database.
#
#   tests/cli/selfplay.sh PGMATE DBNAME
#
# PGMATE: the pgmate binary; DBNAME: a scratch database (libpq environment for the rest:
# PGHOST, PGPORT, PGUSER). The extension is created there if missing. Games go to
# pgmate.games and pgmate.selfplay_positions under run labels of this script, with run
# names made unique per invocation (checks look only at those runs, except the table-wide
# consistency checks). The --network check runs only when pgmate-worker answers.
# Prints "selfplay: N passed, M failed" and exits 1 on any failure.
set -u

. "$(dirname "$0")/client_test.sh" "$@"  # PGMATE, DB, the checks, TMP
# Clients in the background connect with application_name=$app (stop_bg waits for them).
app="pgmate_selfplay_test_$$"

if ! q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null 2>"$TMP/err"; then
  echo "selfplay: cannot use database \"$DB\": $(cat "$TMP/err")" >&2
  exit 1
fi
if [ "$(q "SELECT to_regclass('pgmate.selfplay_positions') IS NOT NULL")" != t ]; then
  echo "selfplay: pgmate.selfplay_positions is missing in \"$DB\" (install the current extension)" >&2
  exit 1
fi

tag="t$$"   # run labels unique to this invocation
db="dbname=$DB"
small=(--parallel 2 --simulations 8 --max-plies 40 --seed 1 --quiet)

# Games of one run (as SQL).
run_games() { echo "SELECT * FROM pgmate.games WHERE source = 'selfplay' AND selfplay->>'run' = '$1'"; }

# check_positions NAME WHERE: the stored positions of the selected games agree with them:
# one per move, plies 0..n-1, each the game's position at that ply, played = the game's
# move, visits for every legal move and some search done.
check_positions() {
  local games="SELECT * FROM pgmate.games WHERE $2"
  check "$1: one position per move" \
    "$(q "SELECT count(*) FROM ($games) g WHERE g.ply_count <> (SELECT count(*) FROM pgmate.selfplay_positions p WHERE p.game_id = g.id)")" 0
  check "$1: plies contiguous" \
    "$(q "SELECT count(*) FROM (SELECT g.id FROM ($games) g JOIN pgmate.selfplay_positions p ON p.game_id = g.id
          GROUP BY g.id, g.ply_count HAVING min(p.ply) <> 0 OR max(p.ply) <> g.ply_count - 1) bad")" 0
  check "$1: played = moves[ply + 1]" \
    "$(q "SELECT count(*) FROM ($games) g JOIN pgmate.selfplay_positions p ON p.game_id = g.id
          WHERE p.played <> g.moves[p.ply + 1] OR NOT p.played = ANY (p.moves)")" 0
  check "$1: boards replay the game" \
    "$(q "SELECT count(*) FROM ($games) g JOIN pgmate.selfplay_positions p ON p.game_id = g.id
          JOIN LATERAL game_positions(g.start, g.moves) gp ON gp.ply = p.ply WHERE gp.board <> p.board")" 0
  check "$1: moves are the legal moves, visits searched" \
    "$(q "SELECT count(*) FROM ($games) g JOIN pgmate.selfplay_positions p ON p.game_id = g.id
          WHERE cardinality(p.moves) <> legal_move_count(p.board)
             OR (SELECT sum(v) FROM unnest(p.visits) v) <= 0 OR p.value NOT BETWEEN -1 AND 1")" 0
}

# Table-wide: every self-play game has all its positions, and no position lacks its game.
check_consistent() {
  check_positions "$1" "source = 'selfplay'"
  check "$1: no orphan positions" \
    "$(q "SELECT count(*) FROM pgmate.selfplay_positions p WHERE NOT EXISTS (SELECT FROM pgmate.games g WHERE g.id = p.game_id)")" 0
  check "$1: no game without positions" \
    "$(q "SELECT count(*) FROM pgmate.games g WHERE source = 'selfplay' AND ply_count > 0
            AND NOT EXISTS (SELECT FROM pgmate.selfplay_positions p WHERE p.game_id = g.id)")" 0
}

# ---- a small pure-MCTS run
run="$tag-basic"
out=$("$PGMATE" selfplay --db "$db" --games 4 "${small[@]}" --run "$run" 2>"$TMP/err")
rc=$?
check "basic: exit code" "$rc" 0
check "basic: nothing on stderr" "$(cat "$TMP/err")" ""
check "basic: run line" "$(printf '%s\n' "$out" | head -n 1)" "run $run: 0 of 4 games stored, playing 4"
check_match "basic: summary" "$out" "played 4 games \(W/D/L [0-9]+/[0-9]+/[0-9]+, [0-9]+ moves\) in [0-9.]+ s: [0-9]+ positions/s, mean batch [0-9.]+, evaluator pure-mcts; run $run has 4 of 4 games"
check "basic: games stored" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 4
check "basic: columns" \
  "$(q "SELECT DISTINCT event || '|' || white || '|' || black || '|' || (network_id IS NULL)::text || '|' || (date ~ '^[0-9]{4}\.[0-9]{2}\.[0-9]{2}$')::text FROM ($(run_games "$run")) g")" \
  "pgmate self-play|pgmate pure-mcts|pgmate pure-mcts|true|true"
check "basic: rounds and indexes" \
  "$(q "SELECT string_agg(round || ':' || (selfplay->>'index'), ',' ORDER BY round) FROM ($(run_games "$run")) g")" "1:0,2:1,3:2,4:3"
check "basic: parameters" \
  "$(q "SELECT DISTINCT (selfplay->>'simulations') || ' ' || (selfplay->>'max_plies') || ' ' || (selfplay->>'evaluator') FROM ($(run_games "$run")) g")" \
  "8 40 pure-mcts"
check "basic: results and terminations" \
  "$(q "SELECT count(*) FROM ($(run_games "$run")) g WHERE result NOT IN ('1-0', '0-1', '1/2-1/2') OR termination IS NULL OR ply_count NOT BETWEEN 1 AND 40")" 0
check_positions "basic" "source = 'selfplay' AND selfplay->>'run' = '$run'"

# --option goes through the same names as the procedure's options.
"$PGMATE" selfplay --db "$db" --games 1 "${small[@]}" --run "$tag-option" --option c_puct=2.5 --option noise=false >/dev/null 2>&1
check "--option: stored" \
  "$(q "SELECT (selfplay->>'c_puct') || ' ' || (selfplay->>'noise') FROM ($(run_games "$tag-option")) g")" "2.5 false"

# ---- resume: --games is the run's target
out=$("$PGMATE" selfplay --db "$db" --games 6 "${small[@]}" --run "$run" 2>"$TMP/err")
check "resume: exit code" "$?" 0
check "resume: run line" "$(printf '%s\n' "$out" | head -n 1)" "run $run: 4 of 6 games stored, playing 2"
check "resume: games stored" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 6
check "resume: next seeds" \
  "$(q "SELECT string_agg(selfplay->>'index', ',' ORDER BY (selfplay->>'index')::int) FROM ($(run_games "$run")) g")" "0,1,2,3,4,5"
out=$("$PGMATE" selfplay --db "$db" --games 6 "${small[@]}" --run "$run" 2>"$TMP/err")
check "resume done: exit code" "$?" 0
check "resume done: plays none" "$out" "run $run: 6 of 6 games stored, playing 0"
check "resume done: games stored" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 6
check_positions "resume" "source = 'selfplay' AND selfplay->>'run' = '$run'"

# ---- killed inside a game's transaction
# The test hook PGMATE_SELFPLAY_STALL_MS holds each game's transaction open after its
# games row is inserted; kill -9 the client then: the row must never become visible.
run="$tag-stall"
PGMATE_SELFPLAY_STALL_MS=5000 "$PGMATE" selfplay --db "$db application_name=$app" --games 3 --parallel 1 \
  --simulations 4 --max-plies 10 --seed 7 --quiet --run "$run" >/dev/null 2>&1 &
bg_pid=$!
disown "$bg_pid"  # no "Killed" job report from the shell
in_tx=0
for _ in $(seq 1 300); do  # up to 30 s
  in_tx=$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app' AND state = 'idle in transaction'
            AND query LIKE 'INSERT INTO pgmate.games%'")
  [ "$in_tx" = 1 ] && break
  sleep 0.1
done
check "kill in transaction: client waits inside the transaction" "$in_tx" 1
check "kill in transaction: uncommitted game invisible" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 0
stop_bg
check "kill in transaction: backend gone" "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app'")" 0
check "kill in transaction: no game kept" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 0
check_consistent "kill in transaction"
out=$("$PGMATE" selfplay --db "$db" --games 2 --parallel 1 --simulations 4 --max-plies 10 --seed 7 --quiet --run "$run" 2>&1)
check "kill in transaction: rerun" "$(printf '%s\n' "$out" | head -n 1)" "run $run: 0 of 2 games stored, playing 2"
check "kill in transaction: rerun stored" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" 2

# ---- one client per run: a second one stops before playing
"$PGMATE" selfplay --db "$db application_name=$app" --games 100000 --parallel 2 --simulations 8 --quiet \
  --run "$tag-busy" >/dev/null 2>&1 &
bg_pid=$!
disown "$bg_pid"  # no "Killed" job report from the shell
for _ in $(seq 1 100); do  # until it holds the run
  [ "$(q "SELECT count(*) FROM pgmate.client_claims c JOIN pg_stat_activity a ON a.pid = c.holder_pid
          WHERE a.application_name = '$app'")" = 1 ] && break
  sleep 0.1
done
"$PGMATE" selfplay --db "$db" --games 1 --quiet --run "$tag-busy" >"$TMP/out" 2>"$TMP/err"
check "busy run: exit code" "$?" 1
check_match "busy run: message" "$(cat "$TMP/err")" "run $tag-busy is being played by another pgmate selfplay client"
stop_bg
# a role with no privileges holding the run's old advisory key holds nothing
q "DROP ROLE IF EXISTS pgmate_selfplay_nobody; CREATE ROLE pgmate_selfplay_nobody LOGIN" >/dev/null
PGAPPNAME=pgmate_selfplay_holder psql -X -q -U pgmate_selfplay_nobody -d "$DB" \
  -c "SELECT pg_advisory_lock(hashtextextended('pgmate selfplay $tag-held', 0))" -c "SELECT pg_sleep(30)" \
  >/dev/null 2>&1 &
holder=$!
sleep 1
out=$("$PGMATE" selfplay --db "$db" --games 1 --parallel 1 --simulations 4 --max-plies 10 --seed 3 --quiet \
        --run "$tag-held" 2>&1)
check "old advisory key held by a role without privileges: the run is played" "$?" 0
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'pgmate_selfplay_holder'" >/dev/null
q "DROP ROLE pgmate_selfplay_nobody" >/dev/null

# ---- killed at arbitrary moments: whole games only, and the run completes afterwards
run="$tag-random"
for second in 0 1 2; do
  delay="$second.$((RANDOM % 10))"
  "$PGMATE" selfplay --db "$db application_name=$app" --games 100000 --parallel 4 --simulations 32 --max-plies 80 \
    --seed 3 --quiet --run "$run" >/dev/null 2>&1 &
  bg_pid=$!
  disown "$bg_pid"  # no "Killed" job report from the shell
  sleep "$delay"
  stop_bg
done
stored=$(q "SELECT count(*) FROM ($(run_games "$run")) g")
echo "     ($stored games of run $run stored before the kills)"
check_consistent "random kills"
check_match "random kills: games kept" "$stored" '^[1-9][0-9]*$'
check "random kills: seeds never repeat" \
  "$(q "SELECT count(*) - count(DISTINCT selfplay->>'index') FROM ($(run_games "$run")) g")" 0
target=$((stored + 2))
out=$("$PGMATE" selfplay --db "$db" --games "$target" --parallel 4 --simulations 32 --max-plies 80 --seed 3 --quiet \
  --run "$run" 2>&1)
check "random kills: rerun" "$(printf '%s\n' "$out" | head -n 1)" "run $run: $stored of $target games stored, playing 2"
check "random kills: run complete" "$(q "SELECT count(*) FROM ($(run_games "$run")) g")" "$target"
check "random kills: seeds still unique" \
  "$(q "SELECT count(*) - count(DISTINCT selfplay->>'index') FROM ($(run_games "$run")) g")" 0

# ---- bad input
expect_error() {  # NAME EXIT_CODE REGEX ARGS...
  local name=$1 code=$2 regex=$3
  shift 3
  "$PGMATE" selfplay "$@" >"$TMP/out" 2>"$TMP/err"
  check "$name: exit code" "$?" "$code"
  check_match "$name: message" "$(cat "$TMP/err")" "$regex"
}
expect_error "unknown option" 2 'unknown option --bogus' --db "$db" --games 1 --bogus
expect_error "--games -1" 2 '--games must be a whole number from 1 .*"-1"' --db "$db" --games -1
expect_error "--games missing" 2 '--games N is required' --db "$db"
expect_error "bad --simulations" 2 'simulations' --db "$db" --games 1 --simulations many
expect_error "unknown --option" 2 'no_such_setting' --db "$db" --games 1 --option no_such_setting=1
expect_error "--option without =" 2 '--option needs NAME=VALUE' --db "$db" --games 1 --option c_puct
expect_error "no such network" 2 'no network with id 999999' --db "$db" --games 1 --network 999999
expect_error "bad database" 1 'cannot connect to the database' --db "dbname=pgmate_selfplay_no_such_database" --games 1
fake=$(q "INSERT INTO pgmate.networks (name, weights, notes) VALUES ('selfplay.sh fake', '\x00', 'test row') RETURNING id")
expect_error "unreachable worker" 1 "cannot reach pgmate-worker at $TMP/no-worker.sock: .*pass --worker" \
  --db "$db" --games 1 --network "$fake" --worker "$TMP/no-worker.sock" --run "$tag-fake"
q "DELETE FROM pgmate.networks WHERE id = $fake" >/dev/null
check "bad input: nothing stored" "$(q "SELECT count(*) FROM ($(run_games "$tag-fake")) g")" 0

# ---- with the network on pgmate-worker (when the server runs one)
if [ "$(q "SELECT pgmate.wait_for_worker('15 s')" 2>/dev/null)" = t ]; then
  net=$(q "SELECT pgmate.init_network('selfplay.sh', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0}', 5)")
  run="$tag-net"
  out=$("$PGMATE" selfplay --db "$db" --games 2 --parallel 2 --simulations 4 --max-plies 6 --network "$net" \
    --quiet --run "$run" 2>"$TMP/err")
  check "network: exit code" "$?" 0
  check_match "network: summary" "$out" "evaluator network $net; run $run has 2 of 2 games"
  check "network: columns" \
    "$(q "SELECT DISTINCT white || '|' || network_id || '|' || (selfplay->>'evaluator') FROM ($(run_games "$run")) g")" \
    "pgmate network $net|$net|network $net"
  check_positions "network" "source = 'selfplay' AND selfplay->>'run' = '$run'"
  check "network: priors from the network" \
    "$(q "SELECT bool_and(abs((SELECT sum(x) FROM unnest(p.priors) x) - 1) < 1e-3) FROM ($(run_games "$run")) g
          JOIN pgmate.selfplay_positions p ON p.game_id = g.id")" t
else
  echo "skip network: pgmate-worker does not answer (shared_preload_libraries = 'pgmate' and libtorch needed)"
fi

# ---- pgmate play, stdin piped
out=$(printf 'e4\nKe9\nquit\n' | "$PGMATE" play --simulations 20 --seed 1 2>&1)
check "play: exit code" "$?" 0
check_match "play: engine answers in SAN" "$out" 'pgmate plays 1\.\.\. [A-Za-z][a-h1-8x=+#QRBN-]* \([0-9]+% of [0-9]+ visits, value [-+][0-9.]+'
check_match "play: illegal move refused" "$out" 'Ke9.*type moves for the legal moves'
check "play: asked again after the bad move" "$(printf '%s\n' "$out" | grep -c '^your move 2\. >')" 2
check "play: quit" "$(printf '%s\n' "$out" | tail -n 1)" "bye"
out=$(printf 'moves\n' | "$PGMATE" play --simulations 10 2>&1)
check "play: end of input" "$?" 0
check_match "play: moves lists SAN" "$out" '20 legal moves: .*Nf3'
out=$(printf '' | "$PGMATE" play --simulations 50 --color black --fen '6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1' 2>&1)
check_match "play: engine finds the mate" "$out" 'pgmate plays 1\. Ra8# \(.*wins in 1 ply\)'
check "play: result" "$(printf '%s\n' "$out" | tail -n 1)" "game over: 1-0 (White wins by checkmate)"
"$PGMATE" play --color green >/dev/null 2>"$TMP/err"
check "play: bad --color exit code" "$?" 2

echo "selfplay: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
