#!/usr/bin/env bash
# pgmate analyse against a live PostgreSQL database: every position of the games evaluated
# once (transpositions shared), a second run adding nothing; the client killed with -9, its
# server session terminated, and its engines killed in the middle of a run (a rerun completes
# the analysis, nothing is stored twice); an engine that crashes once is replaced, one that
# always crashes has its positions given up; export with evaluations and import elsewhere.
#
#   tests/cli/analyse.sh PGMATE DBNAME
#
# Prints "analyse: N passed, M failed" and exits 1 on any failure.
set -u

. "$(dirname "$0")/client_test.sh" "$@"  # PGMATE, DB, the checks, TMP
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
app="pgmate_analyse_test_$$"
db="dbname=$DB"
SF=/usr/games/stockfish
q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null

"$PGMATE" generate --games 12 --seed 7 --out "$TMP/games.pgn" >/dev/null 2>&1
"$PGMATE" import --db "$db" "$TMP/games.pgn" >/dev/null
check "setup: games" "$(q "SELECT count(*) FROM pgmate.games")" 12
# The positions the games reach, each once (clocks aside).
distinct_positions() {
  q "SELECT count(DISTINCT (board_key(p.board), without_clocks(p.board))) FROM pgmate.games g,
       game_positions(g.start, g.moves) p WHERE $1"
}
evals_of() { q "SELECT count(*) FROM pgmate.position_evals WHERE engine = 'Stockfish 15.1' AND limits = '$1'"; }
stockfish_children() { pgrep -f "^$SF" | wc -l; }

# ---- the first four games, then all: each position once; a second run adds nothing
out=$("$PGMATE" analyse --db "$db" --where "id <= 4" --engine "uci:$SF" --nodes 500 --jobs 2 2>&1)
check "first: exit" "$?" 0
want=$(distinct_positions "g.id <= 4")
check "first: each position once" "$(evals_of nodes=500)" "$want"
check_match "first: summary" "$out" "^analysed $want positions of 4 games with Stockfish 15.1 at nodes=500"
out=$("$PGMATE" analyse --db "$db" --engine "uci:$SF" --nodes 500 --jobs 2 2>&1)
check "all: exit" "$?" 0
all=$(distinct_positions "true")
check "all: each position once" "$(evals_of nodes=500)" "$all"
check_match "all: the first games' positions not again" "$out" "^analysed $((all - want)) positions of 12 games"
check_match "all: transpositions reported" "$out" "transpositions: [0-9.]+% saved"
out=$("$PGMATE" analyse --db "$db" --engine "uci:$SF" --nodes 500 2>&1)
check_match "again: nothing new" "$out" "^analysed 0 positions of 12 games"
check "again: rows" "$(evals_of nodes=500)" "$all"
check "views: every move of every game" \
  "$(q "SELECT count(*) FROM pgmate.move_evals WHERE limits = 'nodes=500'")" \
  "$(q "SELECT sum(ply_count) FROM pgmate.games")"
check "views: every game complete" \
  "$(q "SELECT count(*) FILTER (WHERE complete AND accuracy BETWEEN 0 AND 100) FROM pgmate.game_accuracy WHERE limits = 'nodes=500'")" \
  "$(q "SELECT count(*) * 2 FROM pgmate.games")"

# ---- the client killed with -9 in the middle: a rerun completes, nothing twice
"$PGMATE" analyse --db "$db application_name=$app" --engine "uci:$SF" --nodes 20000 --jobs 2 >/dev/null 2>&1 &
bg_pid=$!
disown "$bg_pid"
for _ in $(seq 1 300); do
  [ "$(evals_of nodes=20000)" -ge 20 ] && break
  sleep 0.1
done
stop_bg
got=$(evals_of nodes=20000)
if [ "$got" -ge 20 ] && [ "$got" -lt "$all" ]; then pass "kill -9: part kept ($got of $all)"; else fail "kill -9: part kept: $got of $all"; fi
for _ in $(seq 1 50); do [ "$(stockfish_children)" = 0 ] && break; sleep 0.1; done
check "kill -9: the engines went with it" "$(stockfish_children)" 0
out=$("$PGMATE" analyse --db "$db" --engine "uci:$SF" --nodes 20000 --jobs 2 2>&1)
check "kill -9: rerun exit" "$?" 0
check "kill -9: rerun completes" "$(evals_of nodes=20000)" "$all"

# ---- the server session terminated: the client stops with the error, a rerun completes
"$PGMATE" analyse --db "$db application_name=$app" --engine "uci:$SF" --nodes 30000 >"$TMP/out" 2>"$TMP/err" &
bg_pid=$!
for _ in $(seq 1 300); do
  [ "$(evals_of nodes=30000)" -ge 5 ] && break
  sleep 0.1
done
q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'" >/dev/null
wait "$bg_pid"
rc=$?
bg_pid=
check "terminated: exit" "$rc" 1
for _ in $(seq 1 50); do [ "$(stockfish_children)" = 0 ] && break; sleep 0.1; done
check "terminated: no engine left" "$(stockfish_children)" 0
"$PGMATE" analyse --db "$db" --engine "uci:$SF" --nodes 30000 --jobs 2 >/dev/null 2>&1
check "terminated: rerun completes" "$(evals_of nodes=30000)" "$all"

# ---- engines killed in the middle of a run: replaced, the run completes
"$PGMATE" analyse --db "$db" --where "id <= 3" --engine "uci:$SF" --nodes 40000 --jobs 2 >"$TMP/out" 2>&1 &
bg_pid=$!
for _ in $(seq 1 300); do
  [ "$(q "SELECT count(*) FROM pgmate.position_evals WHERE limits = 'nodes=40000'")" -ge 3 ] && break
  sleep 0.1
done
pkill -9 -f "^$SF" 
wait "$bg_pid"
rc=$?
bg_pid=
check "engine killed: exit" "$rc" 0
check_match "engine killed: replaced" "$(cat "$TMP/out")" "engines? replaced"
check "engine killed: all positions" "$(evals_of nodes=40000)" "$(distinct_positions "g.id <= 3")"

# ---- an engine that crashes once is replaced; one that always crashes gives its positions up
rm -f "$TMP/started"
out=$("$PGMATE" analyse --db "$db" --where "id = 1" --engine "uci:$ROOT/tests/analysis/fake_analyst.sh dieonce $TMP/started" \
  --nodes 300 2>&1)
check "crash once: exit" "$?" 0
check_match "crash once: replaced" "$out" "1 engine replaced"
check "crash once: all positions" "$(evals_of nodes=300)" "$(distinct_positions "g.id = 1")"
out=$("$PGMATE" analyse --db "$db" --where "id = 1" --engine "uci:$ROOT/tests/arena/fake_uci.sh die" --nodes 300 2>&1)
check "always crashes: exit" "$?" 1
check_match "always crashes: positions given up" "$out" "gave up on .*exited"
check "always crashes: nothing stored" "$(q "SELECT count(*) FROM pgmate.position_evals WHERE engine = 'fake-die'")" 0
out=$("$PGMATE" analyse --db "$db" --engine "uci:/nonexistent/engine" --nodes 300 2>&1)
check "no engine: exit" "$?" 1
check_match "no engine: message" "$out" "cannot be started"
out=$("$PGMATE" analyse --db "$db" --engine "random" 2>&1)
check "not uci: exit" "$?" 2

# ---- a network on the worker: the client's searches and the procedure's, batched
if [ "$(q "SELECT pgmate.wait_for_worker('60 s')")" = t ]; then
  net=$(q "SELECT pgmate.init_network('analyse-test', '{\"preset\": \"tiny\"}', seed => 1)")
  out=$("$PGMATE" analyse --db "$db" --where "id <= 2" --engine "net:$net:4" --parallel 16 2>&1)
  check "network: exit" "$?" 0
  net_evals() { q "SELECT count(*) FROM pgmate.position_evals WHERE engine LIKE 'pgmate network $net %' AND limits = 'simulations=4'"; }
  check "network: each position once" "$(net_evals)" "$(distinct_positions "g.id <= 2")"
  check "network: its own WDL, four simulations" \
    "$(q "SELECT count(*) FILTER (WHERE best_move IS NOT NULL AND (wdl_source <> 'engine' OR nodes <> 4))
          FROM pgmate.position_evals WHERE engine LIKE 'pgmate network $net %'")" 0
  out=$("$PGMATE" analyse --db "$db" --where "id <= 2" --engine "net:$net:4" --nodes 10 2>&1)
  check "network: --nodes refused" "$?" 2
  q "CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE id <= 3', '\"net:$net:4\"', '{\"parallel\": 8}')" >/dev/null 2>&1
  check "network: the procedure adds game 3's positions" "$(net_evals)" "$(distinct_positions "g.id <= 3")"
else
  fail "network: pgmate-worker is not answering"
fi

# ---- exported with evaluations, imported into another database: the same evaluations
"$PGMATE" export --db "$db" --evals --engine "Stockfish 15.1" --limits nodes=500 --where "id <= 2" --out "$TMP/evals.pgn" >/dev/null
check_match "export: eval comments" "$(head -c 2000 "$TMP/evals.pgn")" '\{ \[%eval -?[0-9]+\.[0-9]{2}\] \}'
dropdb --if-exists "${DB}_copy" 2>/dev/null; createdb "${DB}_copy"
psql -X -q -d "${DB}_copy" -c "CREATE EXTENSION pgmate" >/dev/null
out=$("$PGMATE" import --db "dbname=${DB}_copy" "$TMP/evals.pgn" 2>&1)
check_match "import: evaluations stored" "$out" "[0-9]+ evaluations from \[%eval\] comments"
stored=$(psql -X -A -t -d "${DB}_copy" -c "SELECT string_agg(position::text || ' ' || coalesce(score_cp::text, 'm' || mate), ',' ORDER BY position) FROM pgmate.position_evals")
orig=$(q "SELECT string_agg(e.position::text || ' ' || coalesce(e.score_cp::text, 'm' || e.mate), ',' ORDER BY e.position)
          FROM pgmate.position_evals e WHERE e.limits = 'nodes=500' AND e.position IN (
            SELECT without_clocks(p.board) FROM pgmate.games g, game_positions(g.start, g.moves) p
            WHERE g.id <= 2 AND p.ply > 0) AND NOT (e.mate IS NOT NULL AND e.mate = 0)")
check "import: the same evaluations" "$stored" "$orig"
dropdb "${DB}_copy"

echo "analyse: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
