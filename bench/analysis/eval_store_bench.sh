#!/usr/bin/env bash
# What storing an evaluation costs with its checks (the writer trigger and the check that
# its moves are legal in its position), against the same rows stored into a copy of
# pgmate.position_evals with its other constraints but without these (the table as 0.13.0
# had it), in the same run: ROWS evaluations of distinct
# positions, with a best move, a PV and three MultiPV lines each, through
# pgmate.save_position_evals and through the same INSERT into the copy. Prints rows/s of
# each and the ratio.
#
# usage: bench/analysis/eval_store_bench.sh [ROWS] [DB]   (ROWS 50000; DB pgmate_eval_store_bench)
# The server must be running (scripts/pg-server.sh start; eval "$(scripts/pg-server.sh env)").
set -euo pipefail
rows=${1:-50000}
db=${2:-pgmate_eval_store_bench}
dropdb --if-exists "$db" >/dev/null
createdb "$db"
[ -n "${KEEP:-}" ] || trap 'dropdb --if-exists "$db" >/dev/null' EXIT
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" "$@"; }
q -c "CREATE EXTENSION pgmate"
pgmate=${PGMATE:-build/bin/pgmate}
"$pgmate" generate --games $(( rows / 40 + 1 )) --seed 1 --db "dbname=$db" >/dev/null
# Distinct positions of the games, each with its first three legal moves as the lines (so
# every row is legal and the checks run in full).
q <<SQL
CREATE TABLE bench_evals AS
  SELECT jsonb_build_object('board', p.b::text, 'cp', 17, 'mate', NULL, 'win', 60, 'draw', 900, 'loss', 40,
           'wdl_source', 'engine', 'best', m[1]::text, 'pv', m[1]::text, 'depth', 10, 'nodes', 5000,
           'lines', jsonb_build_array(
              jsonb_build_object('move', m[1]::text, 'cp', 17, 'mate', NULL, 'pv', m[1]::text),
              jsonb_build_object('move', m[2]::text, 'cp', 9, 'mate', NULL, 'pv', m[2]::text),
              jsonb_build_object('move', m[3]::text, 'cp', 1, 'mate', NULL, 'pv', m[3]::text))) AS e
  FROM (SELECT DISTINCT ON (board_key(w.b)) w.b
        FROM pgmate.games g,
             LATERAL game_positions(g.start, g.moves) gp,
             LATERAL (SELECT without_clocks(gp.board) AS b) w
        ORDER BY board_key(w.b)) p,
       LATERAL (SELECT array_agg(l.move) AS m FROM legal_moves(p.b) l) l
  WHERE cardinality(m) >= 3
  LIMIT $rows;
CREATE TABLE peer_evals (LIKE pgmate.position_evals INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE peer_evals DROP CONSTRAINT position_evals_believable;
ALTER TABLE peer_evals ALTER COLUMN writer SET DEFAULT 10;
ALTER TABLE peer_evals ADD PRIMARY KEY (key, position, engine, limits, writer);
SQL
n=$(q -c "SELECT count(*) FROM bench_evals")
ms() { local t0 t1; t0=$(date +%s%N); q -c "$1" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
peer=$(ms "INSERT INTO peer_evals AS e (key, position, engine, limits, score_cp, mate, win, draw, loss, wdl_source, best_move, pv, depth, nodes, lines)
           SELECT board_key(r.board), without_clocks(r.board), 'Bench', '', r.cp, r.mate, r.win, r.draw, r.loss, r.wdl_source,
                  r.best, string_to_array(r.pv, ' ')::move[], r.depth, r.nodes, r.lines
           FROM (SELECT jsonb_agg(e) AS a FROM bench_evals) x,
                jsonb_to_recordset(x.a) AS r(board board, cp int, mate int, win smallint, draw smallint, loss smallint,
                                             wdl_source text, best move, pv text, depth int, nodes bigint, lines jsonb)
           ON CONFLICT (key, position, engine, limits, writer) DO NOTHING")
pgmate=$(ms "SELECT pgmate.save_position_evals('Bench', '', (SELECT jsonb_agg(e) FROM bench_evals))")
stored=$(q -c "SELECT count(*) FROM pgmate.position_evals WHERE engine = 'Bench'")
[ "$stored" = "$n" ] || { echo "stored $stored of $n rows" >&2; exit 1; }
awk -v n="$n" -v p="$peer" -v m="$pgmate" 'BEGIN {
  printf "rows %d: unchecked copy %.0f rows/s, pgmate.save_position_evals %.0f rows/s, ratio %.2f\n",
         n, n / (p / 1000), n / (m / 1000), p / m }'
