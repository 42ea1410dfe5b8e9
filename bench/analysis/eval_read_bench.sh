#!/usr/bin/env bash
# What reading evaluations through pgmate.visible_evals costs (one row per position, engine
# and limits, of the writers this session reads) against reading pgmate.position_evals
# directly as 0.13.0's views did, in the same run: GAMES generated games, every position
# evaluated once by this role and, for a share, by a second role too (so the choice between
# writers has work to do), then pgmate.eval_targets (the training rows) and move_evals
# counted both ways (the peers are the same views over this role's rows of the table).
# Prints each query's time, the rows, and the ratio (peer time / pgmate time).
#
# usage: bench/analysis/eval_read_bench.sh [GAMES] [DB]   (GAMES 2000; DB pgmate_eval_read_bench)
# The server must be running (scripts/pg-server.sh start; eval "$(scripts/pg-server.sh env)").
set -euo pipefail
games=${1:-2000}
db=${2:-pgmate_eval_read_bench}
pgmate=${PGMATE:-build/bin/pgmate}
dropdb --if-exists "$db" >/dev/null
createdb "$db"
[ -n "${KEEP:-}" ] || trap 'dropdb --if-exists "$db" >/dev/null; psql -X -q -d postgres -c "DROP ROLE IF EXISTS eval_read_bench_other" >/dev/null' EXIT
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" "$@"; }
q -c "CREATE EXTENSION pgmate"
"$pgmate" generate --games "$games" --seed 3 --db "dbname=$db" >/dev/null
q <<'SQL'
CREATE TEMP TABLE p AS
  SELECT DISTINCT ON (board_key(w.b)) w.b
  FROM pgmate.games g, game_positions(g.start, g.moves) gp, LATERAL (SELECT without_clocks(gp.board) AS b) w
  ORDER BY board_key(w.b);
-- this role's evaluation of every position: a score, the model's WDL, a legal best move
ALTER TABLE p ADD COLUMN best move;
UPDATE p SET best = (SELECT l.move FROM legal_moves(b) l LIMIT 1);
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move)
SELECT board_key(b), b, 'Bench', '', 17, 300, 400, 300, 'model', best FROM p;
-- a second writer's rows for a fifth of them, which this role does not read by default
DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'eval_read_bench_other') THEN
  CREATE ROLE eval_read_bench_other; END IF; END $$;
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, writer)
SELECT board_key(b), b, 'Bench', '', -17, 300, 400, 300, 'model', best, 'eval_read_bench_other' FROM p
WHERE abs(board_key(b)) % 5 = 0;
-- the peers: the same views reading this role's rows of position_evals directly, as 0.13.0's
-- read the table (made from the views' own text, so only that differs)
DO $$ BEGIN
  EXECUTE 'CREATE VIEW peer_eval_targets AS ' || replace(pg_get_viewdef('pgmate.eval_targets'::regclass),
    'pgmate.visible_evals', '(SELECT * FROM pgmate.position_evals WHERE writer = current_user::regrole)');
  EXECUTE 'CREATE VIEW peer_move_evals AS ' || replace(pg_get_viewdef('pgmate.move_evals'::regclass),
    'pgmate.visible_evals', '(SELECT * FROM pgmate.position_evals WHERE writer = current_user::regrole)');
END $$;
ANALYZE pgmate.position_evals;
SQL
rows=$(q -c "SELECT count(*) FROM pgmate.position_evals")
ms() { local t0 t1; t0=$(date +%s%N); q -c "$1" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
both() {  # NAME QUERY-ON-VIEW PEER-VIEW VIEW: times the query through the view and its peer
  local a b n m
  b=$(ms "${2//@/$4}")
  a=$(ms "${2//@/$3}")
  n=$(q -c "${2//@/$4}" | head -n 1 | cut -d'|' -f1)
  m=$(q -c "${2//@/$3}" | head -n 1 | cut -d'|' -f1)
  [ "$n" = "$m" ] || { echo "$1: the two reads differ ($n and $m rows)" >&2; exit 1; }
  awk -v name="$1" -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
    printf "%s, %d rows: %d ms through visible_evals, %d ms reading position_evals directly: ratio %.2f\n", name, n, b, a, a / b }'
}
echo "$games games, $rows evaluations (a fifth of the positions also by a second writer)"
both eval_targets "SELECT count(*), sum(z) FROM @" peer_eval_targets pgmate.eval_targets
both move_evals "SELECT count(*), sum(cp_before) FROM @" peer_move_evals pgmate.move_evals
