#!/usr/bin/env bash
# The game database over two shards against one server (figures in bench/RESULTS.md,
# "shards"): the same lichess-format games imported into one server's database, and, half
# each, into two shards by two clients at once (scripts/shards.sh up 2, all on this
# machine); then position_count, the explorer and the explorer with a speed and rating filter
# over the same positions, through the coordinator (pgmate_cluster) and on the one server,
# measured inside each server (clock_timestamp around each call, warm), and their ratio.
#
#   bench/shards.sh [GAMES]     (default 200000)
#
# Environment: PGMATE (build/bin/pgmate), DB (pgmate_shards_bench on the project's server),
# SAMPLES (300 positions from plies 1-12 of games drawn by a fixed seed, and the start).
set -euo pipefail
games=${1:-200000}
PGMATE=${PGMATE:-build/bin/pgmate}
DB=${DB:-pgmate_shards_bench}
SAMPLES=${SAMPLES:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap '"$root/scripts/shards.sh" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }

"$root/scripts/shards.sh" up 2 >/dev/null
COORD=$("$root/scripts/shards.sh" conninfo coordinator)
"$PGMATE" generate --games "$games" --seed 11 --lichess --out "$TMP/all.pgn" >/dev/null 2>&1
awk -v out="$TMP/half" '/^\[Event /{n++} {print > (out (n % 2) ".pgn")}' "$TMP/all.pgn"
for f in all half0 half1; do zstd -q -T2 "$TMP/$f.pgn" -o "$TMP/$f.pgn.zst" && rm "$TMP/$f.pgn"; done

dropdb --if-exists "$DB"
createdb "$DB"
psql -X -q -d "$DB" -c "CREATE EXTENSION pgmate"
t=$(now)
"$PGMATE" import --db "dbname=$DB" "$TMP/all.pgn.zst" >/dev/null
one_s=$(since "$t")
t=$(now)
"$PGMATE" import --db "$("$root/scripts/shards.sh" conninfo 0)" --jobs 1 "$TMP/half0.pgn.zst" >/dev/null &
p0=$!
"$PGMATE" import --db "$("$root/scripts/shards.sh" conninfo 1)" --jobs 1 "$TMP/half1.pgn.zst" >/dev/null
wait $p0
two_s=$(since "$t")
printf 'import of %s games: one server (2 connections) %.1f s, %.0f games/s; two shards (a client each) %.1f s, %.0f games/s\n' \
  "$games" "$one_s" "$(echo "$games / $one_s" | bc -l)" "$two_s" "$(echo "$games / $two_s" | bc -l)"

# The positions, as text, the same on both sides.
probes=$(psql -X -q -A -t -d "$DB" -c "
  SELECT string_agg('(' || quote_literal(board::text) || ')', ', ') FROM (
    SELECT p.board FROM (SELECT id FROM pgmate.games ORDER BY hashint8(id) LIMIT $SAMPLES) g JOIN pgmate.games USING (id),
    LATERAL (SELECT * FROM game_positions(start, moves) WHERE ply BETWEEN 1 AND 12 ORDER BY hashint8(id * 31 + ply) LIMIT 1) p
    UNION ALL SELECT 'startpos'::board) b")
timings() {  # SCHEMA CONNECTION...: p50 and p95 (ms) per method
  local s=$1
  shift
  psql -X -q -A -t -v ON_ERROR_STOP=1 "$@" -c "
    CREATE TEMP TABLE probes (board text);
    INSERT INTO probes VALUES $probes;
    CREATE TEMP TABLE timings (method text, ms float8);
    DO \$\$
    DECLARE r record; t timestamptz; n bigint; m text; q text;
    BEGIN
      FOREACH m IN ARRAY ARRAY['position_count', 'explorer', 'explorer blitz 2000+'] LOOP
        q := CASE m WHEN 'position_count' THEN 'SELECT $s.position_count(\$1::board)'
                    WHEN 'explorer' THEN 'SELECT count(*) FROM $s.explorer(\$1::board)'
                    ELSE 'SELECT count(*) FROM $s.explorer(\$1::board, ''{\"speed\": \"blitz\", \"min_rating\": 2000}'')' END;
        FOR r IN SELECT board FROM probes LOOP EXECUTE q INTO n USING r.board; END LOOP;  -- warm
        FOR r IN SELECT board FROM probes LOOP
          t := clock_timestamp();
          EXECUTE q INTO n USING r.board;
          INSERT INTO timings VALUES (m, 1000 * extract(epoch FROM clock_timestamp() - t));
        END LOOP;
      END LOOP;
    END \$\$;
    SELECT method, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 3),
           round(percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)::numeric, 3)
    FROM timings GROUP BY method ORDER BY method"
}
timings pgmate -d "$DB" >"$TMP/one"
timings pgmate_cluster "$COORD" >"$TMP/two"
echo "latency over $(( SAMPLES + 1 )) positions (ms): one server | two shards through the coordinator | ratio of p95"
join -t '|' "$TMP/one" "$TMP/two" | while IFS='|' read -r method p50a p95a p50b p95b; do
  printf '  %-22s p50 %7s p95 %7s | p50 %7s p95 %7s | x%.2f\n' "$method" "$p50a" "$p95a" "$p50b" "$p95b" \
    "$(echo "$p95b / $p95a" | bc -l)"
done
