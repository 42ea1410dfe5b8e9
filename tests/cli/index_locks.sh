#!/usr/bin/env bash
# The position index's lock against roles with no privilege on it, across sessions.
#
#   tests/cli/index_locks.sh PGMATE DBNAME
#
# PGMATE: the pgmate binary; DBNAME: a scratch database (libpq environment for the rest:
# PGHOST, PGPORT, PGUSER, a superuser). A role that may log in and read every table of
# pgmate, and nothing more, holds in an open transaction the advisory key the index once
# locked on and ACCESS SHARE on the index's lock table; meanwhile other sessions insert,
# import (pgmate import), merge and delete games without waiting. That role cannot take
# the lock in the modes the index uses. Then a role given the importer grants of docs/security.md
# imports with pgmate import. Creates and drops the roles pgmate_lock_reader and
# pgmate_lock_importer.
# Prints "index_locks: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 PGMATE DBNAME" >&2
  exit 2
fi
PGMATE=$1
DB=$2
READER=pgmate_lock_reader
IMPORTER=pgmate_lock_importer

. "$(dirname "$0")/checks.sh"

TMP=$(mktemp -d)
held_pid=
drop_roles() {
  for role in $READER $IMPORTER; do
    q "DO \$\$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN
         DROP OWNED BY $role; DROP ROLE $role; END IF; END \$\$" >/dev/null
  done
}
cleanup() {
  exec 3>&- 2>/dev/null
  [ -n "$held_pid" ] && kill "$held_pid" 2>/dev/null
  [ -n "$held_pid" ] && wait "$held_pid" 2>/dev/null
  drop_roles
  rm -rf "$TMP"
}
trap cleanup EXIT

if ! q "CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null 2>"$TMP/err"; then
  echo "index_locks: cannot use database \"$DB\": $(cat "$TMP/err")" >&2
  exit 1
fi
drop_roles
q "CREATE ROLE $READER LOGIN;
   GRANT USAGE ON SCHEMA pgmate TO $READER;
   GRANT SELECT ON ALL TABLES IN SCHEMA pgmate TO $READER;" >/dev/null
# the importer recipe of docs/security.md
q "CREATE ROLE $IMPORTER LOGIN;
   GRANT USAGE ON SCHEMA pgmate TO $IMPORTER;
   GRANT SELECT, INSERT ON pgmate.games TO $IMPORTER;
   GRANT USAGE ON SEQUENCE pgmate.games_id_seq TO $IMPORTER;
   GRANT SELECT ON pgmate.position_runs TO $IMPORTER;
   GRANT EXECUTE ON FUNCTION pgmate.position_index_merge(boolean),
                             pgmate.position_index_merge_part(bigint[], int, int),
                             pgmate.position_index_merge_publish(bigint[], bigint[], int),
                             pgmate.position_index_clean(int, int),
                             pgmate.position_counts_refresh(int) TO $IMPORTER;" >/dev/null

as_reader() { psql -X -q -A -t -U "$READER" -d "$DB" -c "$1" 2>&1; }
# ---- the reader cannot take the index's lock in either mode the index takes it in
check_match "reader: no ROW EXCLUSIVE" \
  "$(as_reader "BEGIN; LOCK TABLE pgmate.position_index_lock IN ROW EXCLUSIVE MODE; ROLLBACK;")" 'permission denied'
check_match "reader: no SHARE ROW EXCLUSIVE" \
  "$(as_reader "BEGIN; LOCK TABLE pgmate.position_index_lock IN SHARE ROW EXCLUSIVE MODE; ROLLBACK;")" 'permission denied'

# ---- what it can take, it holds in a session left open
mkfifo "$TMP/held.in"
psql -X -q -A -t -U "$READER" -d "$DB" <"$TMP/held.in" >"$TMP/held.out" 2>&1 &
held_pid=$!
exec 3>"$TMP/held.in"
cat >&3 <<'EOF'
BEGIN;
SELECT pg_advisory_lock(x'70676d6174650001'::bigint);
SELECT pg_advisory_lock_shared(x'70676d6174650001'::bigint);
SELECT pg_advisory_lock(x'70676d6174650002'::bigint);
LOCK TABLE pgmate.position_index_lock IN ACCESS SHARE MODE;
SELECT count(*) >= 0 FROM pgmate.position_runs;
SELECT 'holding';
EOF
for _ in $(seq 1 100); do
  grep -q holding "$TMP/held.out" && break
  sleep 0.1
done
check "reader: holds the old advisory keys and ACCESS SHARE" \
  "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE a.usename = '$READER' AND l.granted
          AND (l.locktype = 'advisory' OR l.relation = 'pgmate.position_index_lock'::regclass)")" 4

# ---- meanwhile the other sessions do not wait (a statement_timeout says so if they do)
export PGOPTIONS="-c statement_timeout=5s"
q "INSERT INTO pgmate.games (source, moves) VALUES ('index locks', '{e2e4,e7e5}')" >"$TMP/out" 2>&1
check "insert: not held" "$?:$(cat "$TMP/out")" "0:"
q "SET pgmate.position_index_deferred_merges = on;
   INSERT INTO pgmate.games (source, moves) VALUES ('index locks', '{d2d4,d7d5}')" >"$TMP/out" 2>&1
check "deferred insert: not held" "$?:$(cat "$TMP/out")" "0:"
check "merge: not held" "$(q "SELECT pgmate.position_index_merge() > 0" 2>&1)" t
check "delete: not held" "$(q "DELETE FROM pgmate.games WHERE source = 'index locks' RETURNING 1" 2>&1 | wc -l)" 2
"$PGMATE" generate --games 300 --seed 7 --out "$TMP/games.pgn" >/dev/null 2>&1
base=$(q "SELECT coalesce(max(id), 0) FROM pgmate.games")
out=$("$PGMATE" import --db "dbname=$DB" --jobs 3 --batch 20 "$TMP/games.pgn" 2>&1)
check_match "import: not held" "$out" '^imported 300 games (\(0 skipped\) )?in [0-9.]+ s$'

out=$("$PGMATE" import --db "dbname=$DB" --jobs 3 --batch 20 --duplicates skip "$TMP/games.pgn" 2>&1)
check_match "import skipping copies: not held" "$out" '^imported 0 games \(0 skipped, 300 duplicates\) in [0-9.]+ s$'

# ---- the importer recipe of docs/security.md: pgmate import with its parallel merge
out=$("$PGMATE" import --db "dbname=$DB user=$IMPORTER" --jobs 3 --batch 20 "$TMP/games.pgn" 2>&1)
check_match "importer: pgmate import" "$out" '^imported 300 games (\(0 skipped\) )?in [0-9.]+ s$'
unset PGOPTIONS
check "importer: rows added" "$(q "SELECT count(*) FROM pgmate.games WHERE id > $base")" 600
check "importer: every position indexed" \
  "$(q "SELECT bool_and(g.id IN (SELECT pgmate.position_games(p.board)))
        FROM pgmate.games g, game_positions(g.start, g.moves) p WHERE g.id > $base")" t
check "importer: runs merged, no part left" \
  "$(q "SELECT count(*) FILTER (WHERE level = 0) < 4 AND count(*) FILTER (WHERE level < 0) = 0 FROM pgmate.position_runs")" t

echo "ROLLBACK;" >&3
exec 3>&-
wait "$held_pid"
held_pid=

echo "index_locks: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
