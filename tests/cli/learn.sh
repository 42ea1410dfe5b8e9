#!/usr/bin/env bash
# pgmate learn and pgmate report against a live PostgreSQL database and its worker: an
# uninterrupted run; the same run killed with kill -9 during self-play, training and the
# arena, and with its worker killed, then resumed: no half iteration is ever stored, and
# it ends with the uninterrupted run's games (by seed), training runs and matches. The report page
# opened in headless Chromium (skipped without it). Bad usage.
#
#   tests/cli/learn.sh PGMATE DBNAME
#
# Prints "learn: N passed, M failed" and exits 1 on any failure.
set -u

. "$(dirname "$0")/client_test.sh" "$@"  # PGMATE, DB, the checks, TMP
app="pgmate_learn_test_$$"  # the background clients' application_name (stop_bg)
db="dbname=$DB"
q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null
"$PGMATE" import --openings --db "$db" >/dev/null  # the arena's openings (pgn-extract's ECO lines)
net=$(q "SELECT pgmate.init_network('learn', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0, \"policy_head\": \"conv\"}', 3)")
opts=(--network "$net" --option games=6 --option simulations=8 --option parallel=3 --option max_plies=16
      --option steps=60 --option batch=16 --option arena_games=4 --option arena_interval=1 --option veto_games=2
      --option sanity_games=2 --option sanity_interval=1
      --option arena_simulations=4 --option promotion_threshold=0.5 --option search=gumbel
      --option full_search_fraction=0.75 --option seed=11)
ITERATIONS=3

# ---- an uninterrupted run
out=$("$PGMATE" learn --db "$db" --run whole --iterations $ITERATIONS "${opts[@]}" 2>&1)
check "whole: exit" "$?" 0
check_match "whole: progress" "$out" 'iteration 1: self-play games 1 to 6 of 6'
check_match "whole: iteration lines" "$out" "^iteration $ITERATIONS: (promoted|kept|vetoed)"
check_match "whole: summary" "$out" "run whole: $ITERATIONS iterations, best network [0-9]+"
check "whole: iterations" "$(q "SELECT string_agg(iteration::text, ',' ORDER BY iteration) FROM pgmate.learning_log
                                 WHERE run = 'whole'")" "1,2,3"

# What a run has stored, to compare: per iteration its games (index and seed), its
# training runs, its matches and their games. Not the games' moves: batched evaluation on
# the CPU gives a position's priors last bits that depend on the batch it shares (the
# kernels are chosen by shape), so games replayed after an interruption can differ from
# the uninterrupted run's in their search statistics and, through training, later in
# their moves.
snapshot() {
  q "SELECT i.iteration, i.games,
            (SELECT md5(string_agg((g.selfplay->>'index') || ':' || (g.selfplay->>'game_seed'),
                                   ';' ORDER BY (g.selfplay->>'index')::int))
             FROM pgmate.games g WHERE g.selfplay->>'run' = 'learn:' || r.id || ':' || i.iteration) AS games,
            (SELECT count(*) FROM pgmate.training_runs t WHERE t.data = format('SELECT * FROM pgmate.learning_data(%s, %s)', r.id, i.iteration)) AS training_runs,
            (SELECT string_agg(regexp_replace(m.name, '^learn:[0-9]+:', '') || '=' || m.games || '/' ||
                               (SELECT count(*) FROM pgmate.games a WHERE a.match_id = m.id), ',' ORDER BY m.name)
             FROM pgmate.matches m WHERE m.name LIKE 'learn:' || r.id || ':' || i.iteration || ':%') AS matches
     FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
     WHERE r.name = '$1' ORDER BY i.iteration"
}
# A run's stored iterations are whole: as many rows as the run counts, each with its games.
whole_iterations() {
  q "SELECT r.iterations = count(i.iteration)
            AND coalesce(bool_and(i.games = 6 AND i.training_run IS NOT NULL) FILTER (WHERE i.iteration IS NOT NULL), true)
     FROM pgmate.learning_runs r LEFT JOIN pgmate.learning_iterations i ON i.run_id = r.id
     WHERE r.name = '$1' GROUP BY r.iterations"
}
start_bg() {
  "$PGMATE" learn --db "$db application_name=$app" --run killed --iterations $ITERATIONS "${opts[@]}" \
    >>"$TMP/killed.out" 2>&1 &
  bg_pid=$!
}
# wait_for SQL: until the query returns t (at most 60 s)
wait_for() {
  for _ in $(seq 1 600); do
    [ "$(q "$1")" = t ] && return 0
    kill -0 "$bg_pid" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
label="(SELECT 'learn:' || id || ':' FROM pgmate.learning_runs WHERE name = 'killed')"

# ---- the same run killed with kill -9 at several points, then resumed each time
start_bg
wait_for "SELECT count(*) >= 2 FROM pgmate.games WHERE selfplay->>'run' = $label || '1'"
check "killed in self-play: was running" "$?" 0
stop_bg
check "killed in self-play: whole iterations" "$(whole_iterations killed)" t
start_bg
wait_for "SELECT EXISTS (SELECT 1 FROM pgmate.training_runs t WHERE t.status = 'running'
                         AND t.data LIKE '%learning_data(' || (SELECT id FROM pgmate.learning_runs WHERE name = 'killed') || ', 1)')"
check "killed in training: was training" "$?" 0
stop_bg
check "killed in training: whole iterations" "$(whole_iterations killed)" t
start_bg
wait_for "SELECT EXISTS (SELECT 1 FROM pgmate.matches WHERE name LIKE $label || '%' AND status = 'running')"
check "killed in the arena: was playing" "$?" 0
stop_bg
check "killed in the arena: whole iterations" "$(whole_iterations killed)" t
# the worker killed under the call: the client stops with the server's error, the run resumes.
# A worker that dies between two requests is no failure (the next request reconnects and
# hands the network over again), so the worker is first stopped: the call's next request
# then waits on it, and the kill lands under that request.
start_bg
wait_for "SELECT count(*) >= 1 FROM pgmate.games WHERE selfplay->>'run' = $label || '2'"
worker=$(q "SELECT worker_pid()")
kill -STOP "$worker"
sleep 2
q "SELECT pgmate.kill_worker()" >/dev/null
wait "$bg_pid"
check "worker killed: client fails" "$?" 1
bg_pid=
check_match "worker killed: the error" "$(cat "$TMP/killed.out")" 'worker unavailable|08006'
check "worker killed: whole iterations" "$(whole_iterations killed)" t
q "SELECT pgmate.wait_for_worker()" >/dev/null
# now to the end: the same command again (--iterations is the run's total)
"$PGMATE" learn --db "$db" --run killed --iterations $ITERATIONS "${opts[@]}" >>"$TMP/killed.out" 2>&1
check "resumed: exit" "$?" 0
check "resumed: iterations" "$(q "SELECT iterations FROM pgmate.learning_runs WHERE name = 'killed'")" "$ITERATIONS"
whole_snapshot=$(snapshot whole)
killed_snapshot=$(snapshot killed)
check "resumed: the uninterrupted run's games, training and matches" "$killed_snapshot" "$whole_snapshot"
check "resumed: every iteration has one training run" \
  "$(q "SELECT count(*) FROM pgmate.training_runs t WHERE t.status = 'finished'
        AND t.data LIKE 'SELECT * FROM pgmate.learning_data(' || (SELECT id FROM pgmate.learning_runs WHERE name = 'killed') || ',%'")" \
  "$ITERATIONS"

# ---- nothing another session holds stops a run but a call working on it: not the run's old
# advisory key held by a role with no privileges, not a call that failed in a session
# that lives on (each call below stops after the self-play of a fourth iteration)
q "DROP ROLE IF EXISTS pgmate_learn_nobody; CREATE ROLE pgmate_learn_nobody LOGIN" >/dev/null
whole_id=$(q "SELECT id FROM pgmate.learning_runs WHERE name = 'whole'")
PGAPPNAME=pgmate_learn_holder psql -X -q -U pgmate_learn_nobody -d "$DB" \
  -c "SELECT pg_advisory_lock(hashtext('pgmate.learning_runs'), $whole_id)" -c "SELECT pg_sleep(20)" >/dev/null 2>&1 &
holder=$!
sleep 1
out=$(q "CALL pgmate.learn('whole', 1, '{\"stop_after\": \"selfplay\"}')" 2>&1)
check "a role without privileges holding the run's advisory key: learn goes on" "$?" 0
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
PGAPPNAME=pgmate_learn_holder psql -X -q -d "$DB" -c "SET statement_timeout = '300ms'" -c "CALL pgmate.learn('whole', 1)" \
  -c "SELECT pg_sleep(20)" >/dev/null 2>&1 &
holder=$!
sleep 2
out=$(q "CALL pgmate.learn('whole', 1, '{\"stop_after\": \"selfplay\"}')" 2>&1)
check "a call that failed in a session still open: the next call goes on" "$?" 0
check "the run is idle after its call" "$(q "SELECT status FROM pgmate.learning_status WHERE run = 'whole'")" idle
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'pgmate_learn_holder'" >/dev/null
q "DROP ROLE pgmate_learn_nobody" >/dev/null

# ---- --iterations is the run's total: again, it plays nothing; --more 1 goes on with one
# more (the iteration begun above, stopped after its self-play again here)
out=$("$PGMATE" learn --db "$db" --run whole --iterations $ITERATIONS "${opts[@]}" 2>&1)
check_match "total reached: nothing played" "$out" "run whole has $ITERATIONS iterations already"
check "total reached: iterations" "$(q "SELECT iterations FROM pgmate.learning_runs WHERE name = 'whole'")" "$ITERATIONS"
out=$("$PGMATE" learn --db "$db" --run whole --more 1 --option stop_after=selfplay 2>&1)
check_match "--more 1: one more iteration, in progress" "$out" "iteration $((ITERATIONS + 1)) stops after self-play, as asked"

# ---- the report: one self-contained page
"$PGMATE" report --db "$db" --run whole --out "$TMP/whole.html" >/dev/null 2>&1
check "report: exit" "$?" 0
html=$(cat "$TMP/whole.html")
check_match "report: charts" "$html" '<svg'
check "report: iteration rows" "$(grep -c '<td class="\(promoted\|kept\|vetoed\|trained\)">' "$TMP/whole.html")" "$ITERATIONS"
check "report: nothing from outside" "$(grep -c -E '(src|href)=' "$TMP/whole.html")" 0
chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chromium_bin" ]; then
  dom=$(timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium" \
          --dump-dom "file://$TMP/whole.html" 2>/dev/null)
  check_match "report in Chromium: title" "$dom" '<h1>Learning run whole</h1>'
  check "report in Chromium: chart elements" "$(printf '%s' "$dom" | grep -o '<polyline' | wc -l | awk '$1 > 0 {print "some"}')" some
  check "report in Chromium: table rows" "$(printf '%s' "$dom" | grep -c '<td class="\(promoted\|kept\|vetoed\|trained\)">')" "$ITERATIONS"
  timeout 120 "$chromium_bin" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium" \
    --window-size=1000,1400 --screenshot="$TMP/whole.png" "file://$TMP/whole.html" >/dev/null 2>&1
  check_match "report in Chromium: rendered" "$(head -c 8 "$TMP/whole.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" '^89504e470d0a1a0a$'
else
  echo "skip report in Chromium: chromium is not installed"
fi

# ---- bad usage
"$PGMATE" learn --db "$db" --iterations 1 >/dev/null 2>&1
check "usage: no run" "$?" 2
"$PGMATE" learn --db "$db" --run x --iterations 1 --option games=many >"$TMP/bad.out" 2>&1
check "usage: a number option given a word" "$?" 2
"$PGMATE" learn --db "$db" --run x --iterations 1 --option games=2.0 >"$TMP/bad.out" 2>&1
check "usage: an integer option given 2.0" "$?" 2
check_match "usage: 2.0 named" "$(cat "$TMP/bad.out")" '--option games needs a whole number, not "2.0"'
"$PGMATE" learn --db "$db" --run x --iterations 1 --more 1 >"$TMP/bad.out" 2>&1
check "usage: --iterations and --more" "$?" 2
"$PGMATE" learn --db "$db" --run x --iterations 1 --option gamez=3 >"$TMP/bad.out" 2>&1
check "usage: unknown option fails" "$?" 1
check_match "usage: unknown option named" "$(cat "$TMP/bad.out")" 'unknown learn option "gamez"'
"$PGMATE" report --db "$db" --run nosuch --out "$TMP/x.html" >/dev/null 2>&1
check "usage: report of no run" "$?" 2
check "usage: nothing stored" "$(q "SELECT count(*) FROM pgmate.learning_runs WHERE name IN ('x', 'nosuch')")" 0

echo "learn: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
