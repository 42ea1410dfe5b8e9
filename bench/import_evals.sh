#!/usr/bin/env bash
# pgmate import of lichess-format games with [%eval] comments: the evaluations sent as
# binary arrays to pgmate.save_position_scores against the same games with the evaluations
# sent as JSON to pgmate.save_position_evals (what the client falls back to for a server
# without save_position_scores: the function is taken out of the extension in that run's
# database), each imported RUNS times into a fresh database, alternating. Prints each run,
# the medians, their ratio (JSON / arrays; above 1: the arrays are faster) and whether both
# stored the same evaluations.
#
# usage: bench/import_evals.sh [GAMES] [RUNS]   (GAMES 200000, RUNS 3)
# The server must be running (scripts/pg-server.sh start; eval "$(scripts/pg-server.sh env)").
set -euo pipefail
games=${1:-200000}
runs=${2:-3}
pgmate=${PGMATE:-build/bin/pgmate}
db=pgmate_import_evals_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; dropdb --if-exists "$db" >/dev/null 2>&1' EXIT
"$pgmate" generate --games "$games" --seed 1 --lichess --out - 2>/dev/null | zstd -q -c >"$tmp/games.pgn.zst"
scores_fn="pgmate.save_position_scores(text, text, board[], int[], int[], smallint[], smallint[], smallint[])"
stored() { psql -X -q -A -t -d "$db" -c "SELECT count(*) || ' ' || md5(string_agg(key || ' ' || position::text || ' ' ||
  coalesce(score_cp::text, '') || ' ' || coalesce(mate::text, '') || ' ' || win || ' ' || draw || ' ' || loss, ','
  ORDER BY key, position::text)) FROM pgmate.position_evals"; }
run() {  # arrays | json: seconds of one import into a fresh database
  dropdb --if-exists "$db" >/dev/null 2>&1
  createdb "$db"
  psql -X -q -d "$db" -c "CREATE EXTENSION pgmate"
  if [ "$1" = json ]; then
    psql -X -q -d "$db" -c "ALTER EXTENSION pgmate DROP FUNCTION $scores_fn" -c "DROP FUNCTION $scores_fn"
  fi
  local t0 t1
  t0=$(date +%s%N)
  "$pgmate" import --db "dbname=$db" "$tmp/games.pgn.zst" >/dev/null
  t1=$(date +%s%N)
  stored >"$tmp/$1.stored"
  awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f", ns / 1e9 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
arrays=() json=()
for i in $(seq 1 "$runs"); do
  a=$(run arrays); arrays+=("$a")
  j=$(run json); json+=("$j")
  echo "run $i: arrays $a s, JSON $j s"
done
ma=$(printf '%s\n' "${arrays[@]}" | median)
mj=$(printf '%s\n' "${json[@]}" | median)
echo "$games games, $(cut -d' ' -f1 "$tmp/arrays.stored") evaluations: medians arrays $ma s ($(awk -v g="$games" -v s="$ma" 'BEGIN { printf "%.0f", g / s }') games/s), JSON $mj s ($(awk -v g="$games" -v s="$mj" 'BEGIN { printf "%.0f", g / s }') games/s): x$(awk -v a="$ma" -v j="$mj" 'BEGIN { printf "%.2f", j / a }')"
echo "the same evaluations stored: $(cmp -s "$tmp/arrays.stored" "$tmp/json.stored" && echo true || echo false)"
