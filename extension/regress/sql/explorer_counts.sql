-- The explorer's per-position counts, checked against the explorer that reads the games
-- (pgmate.explorer_counts off): every position of the games up to the fourth ply, under a
-- dozen filters, the same rows. Kept through a refresh, inserts of one and many games,
-- updates of what the counts know and of what they do not, deletes, a bulk import's
-- stale counts and a truncation. Everything runs in a transaction that is rolled back.
SELECT last_value AS games_seq, is_called AS games_called FROM pgmate.games_id_seq \gset
BEGIN;
TRUNCATE pgmate.games CASCADE;

-- Games with lichess's speeds, ratings on both sides of the bands' limits, one rating
-- missing or none, and dates of a month, a year alone, none.
CREATE TEMP TABLE game_mix AS
SELECT i,
       (ARRAY['1-0', '0-1', '1/2-1/2', '*'])[1 + i % 4] AS result,
       (ARRAY['{e2e4,e7e5,g1f3,b8c6}', '{e2e4,c7c5,g1f3}', '{d2d4,d7d5,c2c4}', '{g1f3,d7d5,d2d4}',
              '{e2e4,e7e5,g1f3,g8f6}', '{d2d4,g8f6,c2c4,e7e6}', '{e2e4}'])[1 + i % 7]::move[] AS moves,
       (ARRAY['2019.05.01', '2019.06.30', '2019.??.??', '????.??.??', '2020.01.15', NULL, '2019.06.??',
              '2018.12.31', '2021.03.04', '19.6.1', '2019.13.01'])[1 + i % 11] AS date,
       jsonb_strip_nulls(jsonb_build_object(
         'TimeControl', (ARRAY['60+0', '180+2', '600+5', '-', '15+0', '?', '1800+20', NULL])[1 + i % 8],
         'WhiteElo', (ARRAY['999', '1000', '1999', '2000', '2500', '2499', '?', NULL, '1600'])[1 + i % 9],
         'BlackElo', (ARRAY['1001', '2000', NULL, '2200', '2601', '1199', '1200'])[1 + i % 13 % 7])) AS tags
FROM generate_series(1, 700) i;
INSERT INTO pgmate.games (source, white, black, result, moves, date, tags)
SELECT 'counts', 'w' || i, 'b' || i, result, moves, date, tags FROM game_mix;
SELECT counted_positions AS counted_before_a_refresh FROM pgmate.position_index_size;

-- Every position up to the fourth ply of the games; the filters the counts answer, and some
-- they cannot (a rating inside a band, a player).
CREATE TEMP TABLE probes AS
  SELECT DISTINCT p.board FROM pgmate.games g, game_positions(g.start, g.moves[1:4]) p;
CREATE TEMP TABLE probe_filters (filters jsonb);
INSERT INTO probe_filters VALUES ('{}'), ('{"speed": "blitz"}'), ('{"speed": ["bullet", "rapid"]}'),
  ('{"min_rating": 2000}'), ('{"max_rating": 1999}'), ('{"min_rating": 1000, "max_rating": 2499}'),
  ('{"min_rating": 2001}'), ('{"max_rating": 2000}'), ('{"since": "2019.06"}'), ('{"until": "2019"}'),
  ('{"since": "2019", "until": "2019.06"}'), ('{"speed": "correspondence", "min_rating": 1600, "since": "2019"}'),
  ('{"player": "w8"}'), ('{"min_rating": -5, "max_rating": 99999}');
-- The explorer's rows and top games from the counts and from the games, each side EXCEPT
-- the other.
CREATE FUNCTION pg_temp.counts_mismatches() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  mismatches bigint;
BEGIN
  PERFORM set_config('pgmate.explorer_counts', 'on', true);
  CREATE TEMP TABLE from_counts AS
    SELECT p.board::text AS position, f.filters, e.* FROM probes p, probe_filters f, pgmate.explorer(p.board, f.filters) e
    UNION ALL
    SELECT p.board::text, NULL, e.*, NULL, NULL FROM probes p, pgmate.explorer(p.board) e
    UNION ALL
    SELECT p.board::text, '"top"', NULL, NULL, t.game, NULL, NULL, NULL, NULL, t.average_rating, NULL
    FROM probes p, pgmate.explorer_top_games(p.board) t;
  PERFORM set_config('pgmate.explorer_counts', 'off', true);
  CREATE TEMP TABLE from_games AS
    SELECT p.board::text AS position, f.filters, e.* FROM probes p, probe_filters f, pgmate.explorer(p.board, f.filters) e
    UNION ALL
    SELECT p.board::text, NULL, e.*, NULL, NULL FROM probes p, pgmate.explorer(p.board) e
    UNION ALL
    SELECT p.board::text, '"top"', NULL, NULL, t.game, NULL, NULL, NULL, NULL, t.average_rating, NULL
    FROM probes p, pgmate.explorer_top_games(p.board) t;
  PERFORM set_config('pgmate.explorer_counts', 'on', true);
  SELECT count(*) INTO mismatches FROM (
    (TABLE from_counts EXCEPT ALL TABLE from_games) UNION ALL (TABLE from_games EXCEPT ALL TABLE from_counts)) d;
  DROP TABLE from_counts, from_games;
  RETURN mismatches;
END $$;
-- How many rows and positions are compared, and how many of the positions are counted.
CREATE TEMP VIEW compared AS
  SELECT (SELECT count(*) FROM probes) AS positions,
         (SELECT count(*) FROM probes p WHERE EXISTS (SELECT 1 FROM pgmate.position_counts c
            WHERE c.key = (board_key(p.board) # (1::bigint << 63)))) AS counted,
         (SELECT count(*) FROM probes p, pgmate.explorer_top_games(p.board)) AS top_games,
         pg_temp.counts_mismatches() AS mismatches;

-- A refresh counts every position reached by min_games games or more.
SELECT pgmate.position_counts_refresh(min_games => 150) > 0 AS refreshed;
SELECT min_games, stale FROM pgmate.position_counts_state;
SELECT * FROM compared;
-- the start position's top games, by the players' average rating (ties: the earlier game)
SELECT g.white, g.tags ->> 'WhiteElo' AS white_elo, g.tags ->> 'BlackElo' AS black_elo, t.average_rating
FROM pgmate.explorer_top_games('startpos') t JOIN pgmate.games g ON g.id = t.game;
SELECT count(*) AS two_of_them FROM pgmate.explorer_top_games('startpos', 2);
SELECT count(*) AS forty_of_them FROM pgmate.explorer_top_games('startpos', 40);
SELECT (SELECT games FROM pgmate.position_counts WHERE key = (board_key('startpos') # (1::bigint << 63))) =
       (SELECT count(*) FROM pgmate.games) AS start_counts_every_game;
-- position_count answers from the counts too: the entries' count
CREATE TEMP VIEW count_mismatches AS
  SELECT count(*) AS count_mismatches FROM probes
  WHERE pgmate.position_count(board) <> (SELECT count(*) FROM pgmate.position_games(board));
TABLE count_mismatches;
-- the counts are what the explorer reads: with a game deleted behind the trigger's back,
-- the counts still hold it and the games do not, until the index and its counts are rebuilt
SET LOCAL session_replication_role = replica;
DELETE FROM pgmate.games WHERE white IN ('w1', 'w24');
RESET session_replication_role;
SELECT mismatches > 0 AS counts_read FROM compared;
SELECT count(*) FILTER (WHERE g.id IS NULL) AS top_games_read_from_the_counts
FROM pgmate.explorer_top_games('startpos') t LEFT JOIN pgmate.games g ON g.id = t.game;
SELECT pgmate.position_index_rebuild() > 0 AS rebuilt;
SELECT mismatches AS after_the_rebuild FROM compared;

-- Inserts count their games at once: many in one statement, and one at a time.
INSERT INTO pgmate.games (source, white, black, result, moves, date, tags)
SELECT 'counts', 'x' || i, 'y' || i, result, moves, date, tags FROM game_mix WHERE i % 3 = 0;
DO $$
BEGIN
  FOR i IN 1..5 LOOP
    INSERT INTO pgmate.games (source, white, result, moves, date, tags)
      VALUES ('counts', 'single ' || i, '1-0', '{e2e4,e7e5,g1f3,b8c6,f1b5}', '2019.06.0' || i,
              jsonb_build_object('TimeControl', '300+3', 'WhiteElo', (1990 + i * 3)::text, 'BlackElo', '2010'));
  END LOOP;
END $$;
SELECT * FROM compared;

-- Updates: of what the counts know (date, ratings, speed, result, moves), and of what they do not.
UPDATE pgmate.games SET date = '2020.02.02' WHERE white IN ('w3', 'w4', 'x6');
UPDATE pgmate.games SET tags = tags || '{"WhiteElo": "2600", "TimeControl": "60+1"}' WHERE white LIKE 'single%';
UPDATE pgmate.games SET result = '0-1' WHERE white = 'w10';
UPDATE pgmate.games SET moves = '{d2d4,d7d5,c2c4,e7e6}' WHERE white = 'w11';
UPDATE pgmate.games SET event = 'renamed' WHERE white LIKE 'x%';
SELECT * FROM compared;
-- Deletes take their games away.
DELETE FROM pgmate.games WHERE white LIKE 'w2%' OR white = 'single 1';
SELECT * FROM compared;
TABLE count_mismatches;

-- A bulk import leaves the counts stale: the explorer reads the games until a refresh.
SET LOCAL pgmate.position_index_deferred_merges = on;
INSERT INTO pgmate.games (source, white, result, moves, date, tags)
SELECT 'counts', 'bulk ' || i, result, moves, date, tags FROM game_mix WHERE i % 5 = 0;
RESET pgmate.position_index_deferred_merges;
SELECT stale AS stale_after_a_bulk_import FROM pgmate.position_counts_state;
SELECT positions, mismatches FROM compared;
SELECT pgmate.position_index_merge(false) > 0 AS merged, pgmate.position_counts_refresh() > 0 AS refreshed;
SELECT min_games, stale FROM pgmate.position_counts_state;
SELECT * FROM compared;

-- Filters the counts cannot hold are refused, naming them.
\set VERBOSITY terse
SAVEPOINT bad;
SELECT * FROM pgmate.explorer('startpos', '{"since": "2019.06.15"}');
ROLLBACK TO bad;
SELECT * FROM pgmate.explorer('startpos', '{"until": "June"}');
ROLLBACK TO bad;
SELECT * FROM pgmate.explorer('startpos', '{"min_rating": "strong"}');
ROLLBACK TO bad;
SELECT * FROM pgmate.explorer('startpos', '{"max_rating": 1500.5}');
ROLLBACK TO bad;
SELECT pgmate.position_counts_refresh(0);
ROLLBACK TO bad;
SELECT * FROM pgmate.explorer_top_games('startpos', -1);
ROLLBACK TO bad;
\set VERBOSITY default

-- Only the extension's code writes the counts; a role that may read the index but not the
-- counts still gets its answer, from the games.
CREATE ROLE counts_reader;
GRANT USAGE ON SCHEMA pgmate TO counts_reader;
GRANT SELECT ON pgmate.position_runs, pgmate.position_blocks, pgmate.position_staged_blocks, pgmate.games
  TO counts_reader;
SET LOCAL ROLE counts_reader;
SELECT san, games FROM pgmate.explorer('startpos', '{"speed": "blitz"}') ORDER BY games DESC, san LIMIT 3;
SAVEPOINT denied;
SELECT pgmate.position_counts_refresh();
ROLLBACK TO denied;
RESET ROLE;
SELECT san, games FROM pgmate.explorer('startpos', '{"speed": "blitz"}') ORDER BY games DESC, san LIMIT 3;

-- Truncation counts nothing.
TRUNCATE pgmate.games CASCADE;
SELECT counted_positions, stale FROM pgmate.position_index_size, pgmate.position_counts_state;

ROLLBACK;
SELECT setval('pgmate.games_id_seq', :games_seq, :'games_called') IS NOT NULL AS sequence_restored;
