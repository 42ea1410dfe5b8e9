#!/usr/bin/env bash
# pgmate import from a zstd file against the same games from the plain file, in the same
# run: GAMES generated games (pgmate generate --lichess: lichess's export format, clocks on
# every move), each file imported RUNS times into a fresh database, alternating. Prints
# games/s of each run and the ratio of the medians (compressed / plain; target >= 1).
#
# usage: bench/import_compressed.sh [GAMES] [RUNS]   (GAMES 100000, RUNS 3)
# The server must be running (scripts/pg-server.sh start; eval "$(scripts/pg-server.sh env)").
set -euo pipefail
games=${1:-100000}
runs=${2:-3}
pgmate=${PGMATE:-build/bin/pgmate}
db=pgmate_import_compressed_bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; dropdb --if-exists "$db" >/dev/null 2>&1' EXIT
"$pgmate" generate --games "$games" --seed 8 --lichess --out "$tmp/games.pgn" >/dev/null 2>&1
zstd -q -c "$tmp/games.pgn" >"$tmp/games.pgn.zst"
echo "$games games: $(stat -c %s "$tmp/games.pgn") bytes plain, $(stat -c %s "$tmp/games.pgn.zst") zstd"
rate() {  # FILE: games/s of one import into a fresh database
  dropdb --if-exists "$db" >/dev/null 2>&1
  createdb "$db"
  psql -X -q -d "$db" -c "CREATE EXTENSION pgmate"
  local t0 t1
  t0=$(date +%s%N)
  "$pgmate" import --db "dbname=$db" "$1" >/dev/null
  t1=$(date +%s%N)
  awk -v g="$games" -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", g / (ns / 1e9) }'
}
plain=() zst=()
for _ in $(seq 1 "$runs"); do
  plain+=("$(rate "$tmp/games.pgn")")
  zst+=("$(rate "$tmp/games.pgn.zst")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mp=$(median "${plain[@]}") mz=$(median "${zst[@]}")
echo "plain: ${plain[*]} games/s (median $mp)"
echo "zstd:  ${zst[*]} games/s (median $mz)"
awk -v a="$mz" -v b="$mp" 'BEGIN { printf "ratio zstd / plain: %.2f (target >= 1)\n", a / b }'
