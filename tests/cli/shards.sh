#!/usr/bin/env bash
# pgmate's game database over shards (scripts/shards.sh, pgmate_cluster), against one
# server holding the same games: 3,000 lichess-format games imported into one database
# (DB) and, half each, into two shards by two clients at once; then position counts and
# games, the explorer plain and filtered, its top games, material, pattern and move
# searches, a game's analysis and pgmate export, through the coordinator, each compared
# with the single server's answer; again after the same updates, deletes and inserts on
# both. Games are compared by their Site (unique per game): the cluster gives ids of its own.
# Usage: tests/cli/shards.sh PGMATE DB
set -uo pipefail
PGMATE=$1
DB=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/cli/checks.sh
. "$root/tests/cli/checks.sh"
TMP=$(mktemp -d)
trap '"$root/scripts/shards.sh" down >/dev/null 2>&1; rm -rf "$TMP"' EXIT

if ! "$root/scripts/shards.sh" up 2 >"$TMP/up" 2>&1; then
  cat "$TMP/up"
  fail "shards: up 2"
  echo "shards: $passed passed, $failed failed"
  exit 1
fi
pass "shards: up 2"
COORD=$("$root/scripts/shards.sh" conninfo coordinator)
SHARD0=$("$root/scripts/shards.sh" conninfo 0)
SHARD1=$("$root/scripts/shards.sh" conninfo 1)
cq() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$COORD" -c "$1"; }

# ---- the games: one server, and two shards imported at once
q "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS pgmate" >/dev/null
"$PGMATE" generate --games 3000 --seed 5 --lichess --out "$TMP/all.pgn" >/dev/null 2>&1
awk -v out="$TMP/half" '/^\[Event /{n++} {print > (out (n % 2) ".pgn")}' "$TMP/all.pgn"
"$PGMATE" import --db "dbname=$DB" "$TMP/all.pgn" >"$TMP/single.out" 2>&1
check_match "one server: imported" "$(cat "$TMP/single.out")" '^imported 3000 games'
"$PGMATE" import --db "$SHARD0" "$TMP/half0.pgn" >"$TMP/s0.out" 2>&1 &
p0=$!
"$PGMATE" import --db "$SHARD1" "$TMP/half1.pgn" >"$TMP/s1.out" 2>&1
wait $p0
check_match "shard 0: imported" "$(cat "$TMP/s0.out")" '^imported 1500 games'
check_match "shard 1: imported" "$(cat "$TMP/s1.out")" '^imported 1500 games'
check "shards: every game, each where its id says" \
  "$(cq "SELECT count(*), bool_and(id % 2 = substr(tableoid::regclass::text, length('pgmate_cluster.games_') + 1)::int)
         FROM pgmate_cluster.games")" "3000|t"
check "shards: the same games as one server" \
  "$(cq "SELECT md5(string_agg(site, ',' ORDER BY site)) FROM pgmate_cluster.games")" \
  "$(q "SELECT md5(string_agg(site, ',' ORDER BY site)) FROM pgmate.games")"

# ---- the answers, compared: positions of the first eight plies of forty games, and the
# main openings; filters the counts answer and others
probes=$(q "SELECT string_agg(DISTINCT '(' || quote_literal(p.board::text) || ')', ', ')
            FROM (SELECT * FROM pgmate.games ORDER BY site LIMIT 40) g, game_positions(g.start, g.moves[1:8]) p")
filters="('{}'), ('{\"speed\": \"blitz\"}'), ('{\"speed\": [\"bullet\", \"rapid\"], \"min_rating\": 1600}'),
         ('{\"max_rating\": 1999, \"since\": \"2015\"}'), ('{\"until\": \"2012.06\"}'), ('{\"min_rating\": 1650}')"
# A side's answers as sorted text: SCHEMA is pgmate or pgmate_cluster; games are named by Site.
answers() {  # SCHEMA
  local s=$1
  echo "
  CREATE TEMP TABLE probes (board text);
  INSERT INTO probes VALUES $probes;
  CREATE TEMP TABLE probe_filters (filters jsonb);
  INSERT INTO probe_filters VALUES $filters;
  CREATE TEMP TABLE sites AS SELECT id, site FROM $s.games;
  SELECT 'count', board, $s.position_count(board::board)::text FROM probes
  UNION ALL
  SELECT 'games', p.board, string_agg(s.site, ',' ORDER BY s.site)
    FROM probes p, $s.position_games(p.board::board) g JOIN sites s ON s.id = g GROUP BY p.board
  UNION ALL
  SELECT 'first 5 games', p.board, count(*)::text FROM probes p, $s.position_games(p.board::board, 5) g GROUP BY p.board
  UNION ALL
  SELECT 'explorer', p.board, e::text FROM probes p, $s.explorer(p.board::board) e
  UNION ALL
  SELECT 'explorer ' || f.filters::text, p.board, e::text FROM probes p, probe_filters f, $s.explorer(p.board::board, f.filters) e
  UNION ALL
  -- the top games' ratings, and the Sites of those rated above the last (ties go by id,
  -- which the cluster gives otherwise)
  SELECT 'top games', p.board, string_agg(t.average_rating::text, ',' ORDER BY t.average_rating DESC) || ' ' ||
         coalesce(string_agg(s.site, ',' ORDER BY s.site) FILTER (WHERE t.average_rating > l.last), '')
    FROM probes p CROSS JOIN LATERAL $s.explorer_top_games(p.board::board) t JOIN sites s ON s.id = t.game
    CROSS JOIN LATERAL (SELECT min(average_rating) AS last FROM $s.explorer_top_games(p.board::board)) l
    GROUP BY p.board
  ORDER BY 1, 2, 3;"
}
searches() {  # SCHEMA: material, pattern and move searches, by Site
  local s=$1 m=$([ "$1" = pgmate ] && echo "(SELECT g.id FROM pgmate.games g WHERE pgmate.game_reaches_material(g, 'KRvKR'))" \
                                     || echo "(SELECT pgmate_cluster.games_reaching_material('KRvKR'))")
  local p=$([ "$1" = pgmate ] && echo "(SELECT g.id FROM pgmate.games g WHERE pgmate.game_reaches_pattern(g, '8/8/8/3pP3/8/8/8/8'))" \
                              || echo "(SELECT pgmate_cluster.games_reaching_pattern('8/8/8/3pP3/8/8/8/8'))")
  local v=$([ "$1" = pgmate ] && echo "(SELECT id FROM pgmate.games WHERE moves && '{e1g1,e8c8}'::move[])" \
                              || echo "(SELECT pgmate_cluster.games_with_moves('{e1g1,e8c8}'))")
  echo "SELECT 'material', count(*), md5(string_agg(site, ',' ORDER BY site)) FROM $s.games WHERE id IN $m
        UNION ALL
        SELECT 'pattern', count(*), md5(string_agg(site, ',' ORDER BY site)) FROM $s.games WHERE id IN $p
        UNION ALL
        SELECT 'moves', count(*), md5(string_agg(site, ',' ORDER BY site)) FROM $s.games WHERE id IN $v
        ORDER BY 1"
}
compare() {  # LABEL
  local rc_single rc_cluster
  psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "$(answers pgmate)" >"$TMP/single.txt" 2>&1
  rc_single=$?
  psql -X -q -A -t -v ON_ERROR_STOP=1 "$COORD" -c "$(answers pgmate_cluster)" >"$TMP/cluster.txt" 2>&1
  rc_cluster=$?
  check "$1: both answered" "$rc_single $rc_cluster $(head -c 300 "$TMP/cluster.txt" | grep -c ERROR)" "0 0 0"
  check "$1: $(wc -l <"$TMP/single.txt") answers on $(q "SELECT count(*) FROM (VALUES $probes) v") positions, as one server's" \
    "$(diff "$TMP/single.txt" "$TMP/cluster.txt" | head -n 6)" ""
  check "$1: counts, games, explorer rows, top games all answered" \
    "$(cut -d'|' -f1 "$TMP/cluster.txt" | cut -d' ' -f1 | sort -u | tr '\n' ' ')" "count explorer first games top "
  check "$1: material, pattern and move searches" "$(cq "$(searches pgmate_cluster)")" "$(q "$(searches pgmate)")"
  check "$1: the searches find games" "$(cq "SELECT bool_and(n > 0) FROM ($(searches pgmate_cluster)) s(kind, n, h)")" t
}
compare "imported"

# A game's analysis, from the shard that holds it: three games analysed by Stockfish (fresh
# for every position, so a position's evaluation is the same on any server) on the single
# server and on the shards; pgmate_cluster.move_evals against the single server's rows.
# (The games' own [%eval] comments are left out: a position's stored evaluation is the first
# comment stored for it, which on one server may come from a game another shard holds.)
stockfish=$(command -v stockfish || echo /usr/games/stockfish)
sites=$(q "SELECT string_agg(quote_literal(site), ', ' ORDER BY site) FROM (SELECT site FROM pgmate.games ORDER BY md5(site) LIMIT 3) s")
for target in "dbname=$DB" "$SHARD0" "$SHARD1"; do
  "$PGMATE" analyse --db "$target" --where "site IN ($sites)" --engine "uci:$stockfish" --nodes 300 --jobs 1 \
    >"$TMP/analyse.out" 2>&1 || { cat "$TMP/analyse.out"; fail "analysis: pgmate analyse on $target"; }
done
for site in $(q "SELECT site FROM pgmate.games WHERE site IN ($sites) ORDER BY site"); do
  one=$(q "SELECT count(*), md5(string_agg((to_jsonb(m) - 'game')::text, ',' ORDER BY m.ply, m.limits))
           FROM pgmate.move_evals m JOIN pgmate.games g ON g.id = m.game WHERE g.site = '$site' AND m.engine <> 'pgn'")
  many=$(cq "SELECT count(*), md5(string_agg((r - 'game')::text, ',' ORDER BY (r ->> 'ply')::int, r ->> 'limits'))
             FROM pgmate_cluster.move_evals((SELECT id FROM pgmate_cluster.games WHERE site = '$site')) r
             WHERE r ->> 'engine' <> 'pgn'")
  check "analysis: move_evals of ${site##*/}" "$many" "$one"
  check "analysis: ${site##*/} analysed" "$([ "${one%%|*}" -gt 20 ] && echo yes)" yes
done
check "analysis: game_accuracy of the three" \
  "$(cq "SELECT md5(string_agg((r - 'game')::text, ',' ORDER BY r::text)) FROM pgmate_cluster.games g,
         pgmate_cluster.game_accuracy(g.id) r WHERE g.site IN ($sites) AND r ->> 'engine' <> 'pgn'")" \
  "$(q "SELECT md5(string_agg((to_jsonb(a) - 'game')::text, ',' ORDER BY (to_jsonb(a) - 'game')::text)) FROM pgmate.games g
        JOIN pgmate.game_accuracy a ON a.game = g.id WHERE g.site IN ($sites) AND a.engine <> 'pgn'")"

# ---- pgmate export through the coordinator: each game's PGN from its shard, with that
# shard's evaluations; the same text as one server's
engine=$(q "SELECT engine FROM pgmate.position_evals WHERE engine <> 'pgn' LIMIT 1")
for site in $(q "SELECT site FROM pgmate.games WHERE site IN ($sites) ORDER BY site"); do
  one=$("$PGMATE" export --db "dbname=$DB" --where "site = '$site'" --evals --engine "$engine" 2>/dev/null)
  many=$("$PGMATE" export --db "$COORD" --where "site = '$site'" --evals --engine "$engine" 2>/dev/null)
  check "export: ${site##*/} with its evaluations, as one server's" "$many" "$one"
  check_match "export: ${site##*/} has them" "$many" '\[%eval '
done
"$PGMATE" export --db "$COORD" --out "$TMP/cluster.pgn" >"$TMP/export.out" 2>&1
check_match "export: every game" "$(cat "$TMP/export.out")" '^exported 3000 games'
"$PGMATE" export --db "dbname=$DB" --out "$TMP/single.pgn" >/dev/null 2>&1
check "export: the same games (their Site lines)" "$(grep '^\[Site ' "$TMP/cluster.pgn" | sort | md5sum)" \
  "$(grep '^\[Site ' "$TMP/single.pgn" | sort | md5sum)"
check "export: in the cluster's id order" \
  "$(grep '^\[Site ' "$TMP/cluster.pgn" | md5sum)" \
  "$(cq "SELECT '[Site \"' || site || '\"]' FROM pgmate_cluster.games ORDER BY id" | md5sum)"

# ---- the same changes on both: updates of what the index and the counts hold, deletes,
# inserts (through the coordinator: ids from the shards)
change() {  # SCHEMA
  echo "UPDATE $1.games SET result = '1/2-1/2', date = '2031.01.01'
          WHERE site IN (SELECT site FROM $1.games ORDER BY md5(site) LIMIT 60);
        UPDATE $1.games SET tags = tags || '{\"WhiteElo\": \"2777\", \"TimeControl\": \"180+0\"}'
          WHERE site IN (SELECT site FROM $1.games ORDER BY md5(site) OFFSET 60 LIMIT 30);
        UPDATE $1.games SET moves = '{e2e4,e7e5,g1f3,b8c6,f1b5}', result = '1-0'
          WHERE site IN (SELECT site FROM $1.games ORDER BY md5(site) OFFSET 90 LIMIT 10);
        DELETE FROM $1.games WHERE site IN (SELECT site FROM $1.games ORDER BY md5(site) OFFSET 100 LIMIT 80);
        INSERT INTO $1.games (site, white, black, result, moves, date, tags)
          SELECT 'new ' || i, 'new', 'game', '0-1', '{d2d4,g8f6,c2c4,e7e6,b1c3,f8b4}', '2024.05.0' || i,
                 '{\"TimeControl\": \"300+3\", \"WhiteElo\": \"2100\", \"BlackElo\": \"2300\"}'
          FROM generate_series(1, 5) i;"
}
q "$(change pgmate)" >/dev/null
cq "$(change pgmate_cluster)" >/dev/null
check "changed: the same games" \
  "$(cq "SELECT count(*), md5(string_agg(site || result || coalesce(date, ''), ',' ORDER BY site)) FROM pgmate_cluster.games")" \
  "$(q "SELECT count(*), md5(string_agg(site || result || coalesce(date, ''), ',' ORDER BY site)) FROM pgmate.games")"
compare "changed"

# ---- the shards' grants decide: a coordinator role reaches the shards as itself
for target in "$SHARD0" "$SHARD1"; do
  psql -X -q "$target" -c "DO \$\$ BEGIN CREATE ROLE cluster_reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$;" -c "GRANT USAGE ON SCHEMA pgmate TO cluster_reader" >/dev/null
done
# (roles outlive the databases shards.sh makes anew: made only when missing)
cq "DO \$\$ BEGIN CREATE ROLE cluster_reader LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END \$\$;" >/dev/null
cq "GRANT USAGE ON SCHEMA pgmate_cluster TO cluster_reader; GRANT USAGE ON FOREIGN SERVER pgmate_shards TO cluster_reader" >/dev/null
as_reader() { psql -X -q -A -t "$(echo "$COORD" | sed 's/user=postgres/user=cluster_reader/')" -c "$1" 2>&1; }
check_match "a role the shards grant nothing: refused there" \
  "$(as_reader "SELECT pgmate_cluster.position_count('startpos')")" "REMOTE ERROR: permission denied for table position_runs"
for target in "$SHARD0" "$SHARD1"; do
  psql -X -q "$target" -c "GRANT SELECT ON pgmate.position_runs, pgmate.position_blocks, pgmate.position_staged_blocks
                           TO cluster_reader" >/dev/null
done
check "a role the shards let read the index: the count" \
  "$(as_reader "SELECT pgmate_cluster.position_count('startpos')")" "$(q "SELECT pgmate.position_count('startpos')")"
check_match "add_shards: not for PUBLIC" \
  "$(as_reader "SELECT pgmate_cluster.add_shards(ARRAY['host=a'])")" "permission denied for function add_shards"

# ---- what the coordinator refuses
check_match "add_shards: a count not a power of two" \
  "$(psql -X -q -A -t "$COORD" -c "SELECT pgmate_cluster.add_shards(ARRAY['host=a', 'host=b', 'host=c'])" 2>&1)" \
  "power of two.*not 3"
check_match "add_shards: twice" \
  "$(psql -X -q -A -t "$COORD" -c "SELECT pgmate_cluster.add_shards(ARRAY['host=a', 'host=b'])" 2>&1)" \
  "the shards are set already"

echo "shards: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
