-- bench/figures/gamedb_scale.svg from bench/gamedb's figures (bench/RESULTS.md, "gamedb"):
--   psql -X -q -A -t -d DB -f bench/figures/gamedb_scale.sql > bench/figures/gamedb_scale.svg
-- (any database with pgmate). The explorer's filtered p95 from the games is left out: 1,191,
-- 4,117 and 10,073 ms would flatten every other line. position_count at 10M answers a counted
-- position from its counts (at 3M it read every entry).
SELECT pgmate.line_chart('lichess-format games: search latency as the database grows',
                         'games (millions)', 'ms', jsonb_agg(jsonb_build_object('series', s, 'x', x, 'y', y)), 720, 360)
FROM (VALUES
  ('explorer, blitz 2000+, from the counts: p95', 1, 2.633), ('explorer, blitz 2000+, from the counts: p95', 3, 3.415),
  ('explorer, blitz 2000+, from the counts: p95', 10, 3.540),
  ('explorer: p95', 1, 2.268), ('explorer: p95', 3, 3.400), ('explorer: p95', 10, 3.649),
  ('position_count: p99', 1, 5.117), ('position_count: p99', 3, 25.436), ('position_count: p99', 10, 4.699),
  ('position_games, first 100: p99', 1, 11.115), ('position_games, first 100: p99', 3, 50.356),
  ('position_games, first 100: p99', 10, 122.249)
) v(s, x, y);
