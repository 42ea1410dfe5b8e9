#!/usr/bin/env bash
# pgmate train and CALL pgmate.train against a live PostgreSQL database and its worker: a
# run to the end, a client killed with kill -9 and resumed, a worker killed under CALL
# pgmate.train (08006) and the call resumed; both resumed runs end with the uninterrupted
# run's weights, bit for bit (the CLI and the procedure share one loop). Bad usage.
#
#   tests/cli/train.sh PGMATE DBNAME
#
# Prints "train: N passed, M failed" and exits 1 on any failure.
set -u

. "$(dirname "$0")/client_test.sh" "$@"  # PGMATE, DB, the checks, TMP
app="pgmate_train_test_$$"  # the background clients' application_name (stop_bg)
db="dbname=$DB"
q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null

# ---- data: 24 games of random moves, a network
q "SELECT pgmate.import_pgn(string_agg(pgn, E'\n\n')) FROM (
     SELECT '[Result \"' || (ARRAY['1-0', '0-1', '1/2-1/2'])[1 + i % 3] || E'\"]\n' ||
            (SELECT string_agg(m, ' ') FROM unnest(ARRAY['1. e4', 'e5', '2. Nf3', 'Nc6', '3. Bb5', 'a6', '4. Ba4',
             'Nf6', '5. O-O', 'Be7', '6. Re1', 'b5', '7. Bb3', 'd6', '8. c3', 'O-O']) WITH ORDINALITY u(m, k)
             WHERE k <= 6 + i % 10) || ' ' || (ARRAY['1-0', '0-1', '1/2-1/2'])[1 + i % 3] AS pgn
     FROM generate_series(1, 24) i) g" >/dev/null
check "data: games" "$(q "SELECT count(*) FROM pgmate.games")" 24
net=$(q "SELECT pgmate.init_network('cli', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0, \"policy_head\": \"conv\"}', 3)")
data="SELECT board, history, repetitions, played, z FROM pgmate.game_targets"
args=(--db "$db" --network "$net" --data "$data" --steps 300 --batch 64 --lr 0.002
      --option optimizer=adamw --option log_every=10 --option checkpoint_every=10)

# ---- a whole run: progress lines, the new network's id alone on the last line
out=$("$PGMATE" train "${args[@]}" --name whole 2>&1)
check "whole: exit" "$?" 0
whole=$(printf '%s\n' "$out" | tail -n 1)
check_match "whole: last line is an id" "$whole" '^[0-9]+$'
check_match "whole: progress" "$out" 'step 300/300 .*samples/s'
check "whole: parent" "$(q "SELECT parent_id FROM pgmate.networks WHERE id = $whole")" "$net"
check "whole: log rows" "$(q "SELECT count(*) FROM pgmate.training_log WHERE network = $whole")" 31
check "whole: run finished" "$(q "SELECT status FROM pgmate.training_runs WHERE new_network = $whole")" finished

# ---- a client killed with kill -9 after a checkpoint: the same command resumes the run
"$PGMATE" train --db "$db application_name=$app" "${args[@]:2}" --name killed >"$TMP/killed.out" 2>&1 &
bg_pid=$!
for _ in $(seq 1 400); do
  [ "$(q "SELECT count(*) FROM pgmate.training_checkpoints c JOIN pgmate.training_runs r ON r.id = c.run_id
          WHERE r.status = 'running'")" != 0 ] && break
  sleep 0.05
done
stop_bg
killed_run=$(q "SELECT max(id) FROM pgmate.training_runs")
check "killed: run left running" "$(q "SELECT status FROM pgmate.training_runs WHERE id = $killed_run")" running
out=$("$PGMATE" train "${args[@]}" --name killed 2>&1)
check "killed: resumed exit" "$?" 0
check_match "killed: resumed from a checkpoint" "$out" "run $killed_run resumed: .*from the checkpoint of step [1-9][0-9]*"
resumed=$(printf '%s\n' "$out" | tail -n 1)
check "killed: same weights as the whole run" \
  "$(q "SELECT a.weights_sha256 = b.weights_sha256 FROM pgmate.networks a, pgmate.networks b
        WHERE a.id = $whole AND b.id = $resumed")" t
check "killed: same held-out log" \
  "$(q "SELECT count(*) FROM pgmate.training_log a JOIN pgmate.training_log b USING (step)
        WHERE a.network = $whole AND b.network = $resumed AND a.policy_loss IS NOT DISTINCT FROM b.policy_loss")" 31

# ---- the worker killed under CALL pgmate.train: 08006, then the same call resumes
call="CALL pgmate.train($net, '$data', 300, '{\"batch\": 64, \"lr\": 0.002, \"optimizer\": \"adamw\", \"log_every\": 10, \"checkpoint_every\": 10, \"name\": \"sql\"}')"
PGAPPNAME=$app psql -X -q -v VERBOSITY=verbose -d "$DB" -c "$call" >"$TMP/call.out" 2>&1 &
bg_pid=$!
for _ in $(seq 1 400); do
  [ "$(q "SELECT count(*) FROM pgmate.training_checkpoints c JOIN pgmate.training_runs r ON r.id = c.run_id
          WHERE r.status = 'running'")" != 0 ] && break
  sleep 0.05
done
q "SELECT pgmate.kill_worker()" >/dev/null
wait "$bg_pid"
check "worker killed: the call failed" "$?" 1
bg_pid=
check_match "worker killed: 08006" "$(cat "$TMP/call.out")" 'ERROR: +08006: pgmate worker unavailable'
q "SELECT pgmate.wait_for_worker()" >/dev/null
sql_run=$(q "SELECT max(id) FROM pgmate.training_runs")
check "worker killed: run left running" "$(q "SELECT status FROM pgmate.training_runs WHERE id = $sql_run")" running
out=$(psql -X -q -d "$DB" -c "$call" 2>&1)
check_match "worker killed: resumed" "$out" "run $sql_run resumed"
check "worker killed: same weights as the CLI's whole run" \
  "$(q "SELECT a.weights_sha256 = b.weights_sha256 FROM pgmate.networks a, pgmate.training_runs r
        JOIN pgmate.networks b ON b.id = r.new_network WHERE a.id = $whole AND r.id = $sql_run")" t

# ---- nothing another session holds stops a training but a session training that run: not
# the advisory keys of the next runs' ids held by a role with no privileges, not a call
# that failed in a session that lives on (the same call elsewhere resumes its run)
q "DROP ROLE IF EXISTS pgmate_train_nobody; CREATE ROLE pgmate_train_nobody LOGIN" >/dev/null
next=$(q "SELECT coalesce(max(id), 0) + 1 FROM pgmate.training_runs")
PGAPPNAME=pgmate_train_holder psql -X -q -U pgmate_train_nobody -d "$DB" \
  -c "SELECT count(pg_advisory_lock(hashtext('pgmate.training_runs'), g)) FROM generate_series($next, $next + 20) g" \
  -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
holder=$!
sleep 1
held="CALL pgmate.train($net, '$data', 20, '{\"batch\": 64, \"lr\": 0.002, \"log_every\": 10, \"checkpoint_every\": 10, \"name\": \"held\"}')"
out=$(PGOPTIONS="-c statement_timeout=20s" psql -X -q -d "$DB" -c "$held" 2>&1)
check "advisory keys held by a role without privileges: train goes on" "$?:$(printf '%s' "$out" | grep -c ERROR)" "0:0"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'pgmate_train_holder'" >/dev/null
failing="CALL pgmate.train($net, '$data', 200, '{\"batch\": 64, \"lr\": 0.002, \"log_every\": 10, \"checkpoint_every\": 10, \"name\": \"failing\"}')"
PGAPPNAME=pgmate_train_holder psql -X -q -d "$DB" -c "SET statement_timeout = '1500ms'" -c "$failing" \
  -c "SELECT pg_sleep(30)" >/dev/null 2>&1 &
holder=$!
for _ in $(seq 1 100); do  # until the call has failed and its session sleeps
  [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgmate_train_holder'
          AND query LIKE '%pg_sleep%'")" = 1 ] && break
  sleep 0.1
done
failed_run=$(q "SELECT max(id) FROM pgmate.training_runs")
check "a call that failed: its run left running" "$(q "SELECT status FROM pgmate.training_runs WHERE id = $failed_run")" running
out=$(psql -X -q -d "$DB" -c "$failing" 2>&1)
check_match "a call that failed in a session still open: the same call resumes its run" "$out" "run $failed_run resumed"
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'pgmate_train_holder'" >/dev/null
q "DROP ROLE pgmate_train_nobody" >/dev/null

# ---- pg_dump and pg_restore: networks with their lineage, runs, checkpoints and logs
# (pg_dump warns about the self-reference of pgmate.networks.parent_id: the data of one
# table is one COPY, whose foreign-key checks run at its end, so the order does not matter)
summary="SELECT (SELECT string_agg(id || ':' || coalesce(parent_id::text, '-') || ':' || encode(weights_sha256, 'hex'), ','
                   ORDER BY id) FROM pgmate.networks),
                (SELECT string_agg(id || status || coalesce(new_network::text, '-'), ',' ORDER BY id) FROM pgmate.training_runs),
                (SELECT string_agg(run_id || ':' || step || ':' || md5(state), ',' ORDER BY run_id) FROM pgmate.training_checkpoints),
                (SELECT count(*) || ':' || sum(policy_loss) FROM pgmate.training_log)"
restore_db="${DB}_restored"
pg_dump -Fc -f "$TMP/dump" "$DB" 2>"$TMP/dump.err"
check "dump: exit" "$?" 0
dropdb --if-exists "$restore_db" 2>/dev/null
createdb "$restore_db"
pg_restore -d "$restore_db" "$TMP/dump" 2>"$TMP/restore.err"
check "restore: exit" "$?" 0
check "restore: same networks, runs, checkpoints and log" \
  "$(psql -X -q -A -t -d "$restore_db" -c "$summary")" "$(q "$summary")"
check "restore: the restored networks load" \
  "$(psql -X -q -A -t -d "$restore_db" -c "SELECT count(*) FROM pgmate.networks n,
     LATERAL evaluate(ARRAY['startpos'::board], n.id) e")" "$(q "SELECT count(*) FROM pgmate.networks")"
dropdb "$restore_db"

# ---- bad usage: exit 2 and a message naming the problem; nothing stored
runs=$(q "SELECT count(*) FROM pgmate.training_runs")
out=$("$PGMATE" train --db "$db" --data "$data" 2>&1)
check "usage: no network exit" "$?" 2
check_match "usage: no network message" "$out" '--network ID is required'
out=$("$PGMATE" train --db "$db" --network "$net" --data "$data" --option speed=3 2>&1)
check "usage: unknown option exit" "$?" 2
check_match "usage: unknown option message" "$out" 'speed'
out=$("$PGMATE" train --db "$db" --network 999999 --data "$data" 2>&1)
check "usage: unknown network exit" "$?" 2
out=$("$PGMATE" train --db "$db" --network "$net" --data "SELECT board FROM pgmate.game_targets" 2>&1)
check "usage: missing column exit" "$?" 1
check_match "usage: missing column message" "$out" 'no column played'
check "usage: nothing stored" "$(q "SELECT count(*) FROM pgmate.training_runs")" "$runs"
out=$("$PGMATE" train --help 2>&1)
check "usage: --help" "$?" 0

echo "train: $passed passed, $failed failed"
[ "$failed" = 0 ]
