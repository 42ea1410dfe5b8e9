-- The position index, checked against the games themselves: for every position of every
-- game, position_games equals a scan of game_keys; the explorer equals a count over
-- game_positions. Kept through inserts of one and many games, merges, deletes, updates,
-- truncation and a rebuild. Everything runs in a transaction that is rolled back, so the
-- games of the other suites stay as they were.
SELECT last_value AS games_seq, is_called AS games_called FROM pgmate.games_id_seq \gset
BEGIN;

-- Every distinct position of the stored games, with the index's answer and the truth.
CREATE TEMP VIEW index_mismatches AS
  WITH positions AS (
    SELECT DISTINCT ON (board_key(p.board)) p.board
    FROM pgmate.games g, game_positions(g.start, g.moves) p
    ORDER BY board_key(p.board))
  SELECT p.board::text AS position,
         ARRAY(SELECT pgmate.position_games(p.board)) AS indexed,
         ARRAY(SELECT g.id FROM pgmate.games g WHERE game_keys(g.start, g.moves) @> ARRAY[board_key(p.board)] ORDER BY g.id) AS truth
  FROM positions p
  WHERE ARRAY(SELECT pgmate.position_games(p.board)) <>
        ARRAY(SELECT g.id FROM pgmate.games g WHERE game_keys(g.start, g.moves) @> ARRAY[board_key(p.board)] ORDER BY g.id);
-- Blocks go with their runs: none is left behind by a merge, a publication, a delete.
CREATE TEMP VIEW orphan_blocks AS
  SELECT * FROM pgmate.position_blocks b
  WHERE NOT EXISTS (SELECT 1 FROM pgmate.position_runs r WHERE r.id = b.run_id AND NOT r.staged)
  UNION ALL
  SELECT * FROM pgmate.position_staged_blocks b
  WHERE NOT EXISTS (SELECT 1 FROM pgmate.position_runs r WHERE r.id = b.run_id AND r.staged);
-- The explorer's rows for a position, and the same counted from game_positions (the first
-- visit of each game), each side EXCEPT the other: no rows when they agree.
CREATE TEMP TABLE probe (board board);
CREATE TEMP VIEW explorer_mismatches AS
  WITH truth AS (
    SELECT move, count(*) AS games, count(*) FILTER (WHERE result = '1-0') AS white_wins,
           count(*) FILTER (WHERE result = '1/2-1/2') AS draws, count(*) FILTER (WHERE result = '0-1') AS black_wins
    FROM (SELECT DISTINCT ON (g.id) g.id, g.result, p.move
          FROM pgmate.games g, game_positions(g.start, g.moves) p, probe
          WHERE board_key(p.board) = board_key(probe.board)
          ORDER BY g.id, p.ply) firsts
    WHERE move IS NOT NULL GROUP BY move),
  indexed AS (SELECT e.move, e.games, e.white_wins, e.draws, e.black_wins FROM probe, pgmate.explorer(probe.board) e)
  (SELECT 'missing' AS side, * FROM truth EXCEPT SELECT 'missing', * FROM indexed)
  UNION ALL
  (SELECT 'extra', * FROM indexed EXCEPT SELECT 'extra', * FROM truth);

SELECT pgmate.import_pgn($pgn$
[White "ix A"] [Black "ix B"] [Result "1-0"] [WhiteElo "2400"] [BlackElo "2200"] [Date "2019.05.01"]
1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 1-0

[White "ix C"] [Black "ix D"] [Result "0-1"] [WhiteElo "1800"] [Date "2021.??.??"]
1. Nf3 Nc6 2. e4 e5 3. Bc4 Bc5 0-1

[White "ix E"] [Black "ix F"] [Result "1/2-1/2"]
1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 1/2-1/2

[White "ix G"] [Black "ix H"] [Result "*"]
1. Nf3 Nf6 2. Ng1 Ng8 3. e4 e5 *
$pgn$) AS imported;

-- Transpositions: 1.e4 e5 2.Nf3 Nc6 and 1.Nf3 Nc6 2.e4 e5 reach one position.
SELECT array_agg(g ORDER BY g) = ARRAY(SELECT id FROM pgmate.games WHERE white IN ('ix A', 'ix C') ORDER BY id) AS transposition
FROM pgmate.position_games(play('startpos', '{e2e4,e7e5,g1f3,b8c6}'::move[])) g;
SELECT count(*) AS mismatches FROM index_mismatches;
-- counts are games, not visits: game ix G passes the start position twice
SELECT pgmate.position_count('startpos') = (SELECT count(*) FROM pgmate.games WHERE start = 'startpos') AS start_counted_once;
SELECT pgmate.position_count('8/8/8/8/8/8/8/K1k5 w - - 0 1') AS never_reached;
SELECT count(*) AS limited FROM pgmate.position_games('startpos', 2);
-- a limit reads each run's lowest ids only: the same ids as the whole list's first ones
SELECT count(*) AS limited_mismatches
FROM (SELECT DISTINCT p.board FROM pgmate.games g, game_positions(g.start, g.moves) p) p, generate_series(0, 3) n
WHERE ARRAY(SELECT pgmate.position_games(p.board, n)) <>
      ARRAY(SELECT x FROM pgmate.position_games(p.board) x ORDER BY x LIMIT n);
SELECT count(*) AS no_position FROM pgmate.position_games(NULL);
SAVEPOINT bad_limit;
SELECT pgmate.position_games('startpos', -1);
ROLLBACK TO bad_limit;

-- The explorer after 1.e4, by move, and against the truth
INSERT INTO probe VALUES (play('startpos', '{e2e4}'::move[]));
SELECT san, games, white_wins, draws, black_wins, round(score::numeric, 3) AS score
FROM probe, pgmate.explorer(probe.board) ORDER BY games DESC, san;
SELECT count(*) AS explorer_mismatches FROM explorer_mismatches;
TRUNCATE probe;
INSERT INTO probe VALUES ('startpos');
SELECT count(*) AS explorer_mismatches_at_start FROM explorer_mismatches;

-- The explorer with filters, after 1.e4 e5 2.Nf3 Nc6 (reached by ix A and, by transposition,
-- ix C): the average rating of the players whose rating is known, the last date played;
-- unfiltered it counts what the plain explorer counts.
TRUNCATE probe;
INSERT INTO probe VALUES (play('startpos', '{e2e4,e7e5,g1f3,b8c6}'::move[]));
SELECT san, games, white_wins, draws, black_wins, average_rating, last_played
FROM probe, pgmate.explorer(probe.board, '{}') ORDER BY games DESC, san;
SELECT count(*) AS unfiltered_mismatches FROM (
  (SELECT e.move, e.games, e.white_wins, e.draws, e.black_wins FROM probe, pgmate.explorer(probe.board) e
   EXCEPT SELECT e.move, e.games, e.white_wins, e.draws, e.black_wins FROM probe, pgmate.explorer(probe.board, '{}') e)
  UNION ALL
  (SELECT e.move, e.games, e.white_wins, e.draws, e.black_wins FROM probe, pgmate.explorer(probe.board, '{}') e
   EXCEPT SELECT e.move, e.games, e.white_wins, e.draws, e.black_wins FROM probe, pgmate.explorer(probe.board) e)) d;
SELECT f.filters, string_agg(e.san || ' ' || e.games, ', ' ORDER BY e.san) AS moves
FROM probe, (VALUES ('{"min_rating": 2000}'::jsonb), ('{"max_rating": 2000}'), ('{"since": "2020"}'),
                    ('{"until": "2019"}'), ('{"until": "2019.04"}'), ('{"player": "ix D"}'), ('{"white": "ix A", "black": "ix B"}'),
                    ('{"source": "selfplay"}')) f(filters)
LEFT JOIN LATERAL pgmate.explorer(probe.board, f.filters) e ON true
GROUP BY f.filters ORDER BY f.filters::text;
SAVEPOINT bad_filter;
SELECT * FROM pgmate.explorer('startpos', '{"rating": 2000}');
ROLLBACK TO bad_filter;
SELECT * FROM pgmate.explorer('startpos', '[]');
ROLLBACK TO bad_filter;
SELECT count(*) AS position_moves, count(move) AS with_a_move FROM probe, pgmate.position_moves(probe.board);

-- Single-game statements make level-0 runs; every fourth of a level is merged.
DO $$
BEGIN
  FOR i IN 1..20 LOOP
    INSERT INTO pgmate.games (source, white, moves, result)
      VALUES ('manual', 'loop ' || i, (ARRAY['{d2d4,d7d5}', '{d2d4,g8f6,c2c4}', '{c2c4,e7e5}', '{g1f3,d7d5,d2d4}'])[1 + i % 4]::move[], '1/2-1/2');
  END LOOP;
END $$;
SELECT count(*) < 20 AS merged, max(level) >= 1 AS levels FROM pgmate.position_runs;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS limited_mismatches_over_runs
FROM (SELECT DISTINCT p.board FROM pgmate.games g, game_positions(g.start, g.moves) p) p, generate_series(0, 3) n
WHERE ARRAY(SELECT pgmate.position_games(p.board, n)) <>
      ARRAY(SELECT x FROM pgmate.position_games(p.board) x ORDER BY x LIMIT n);
SELECT (SELECT sum(entries) FROM pgmate.position_runs) =
       (SELECT count(*) FROM (SELECT DISTINCT g.id, board_key(p.board) FROM pgmate.games g, game_positions(g.start, g.moves) p) d)
       AS one_entry_per_game_and_position;

-- With merges deferred (what pgmate import sets) runs stay apart until a merge of the
-- levels that are full, which leaves fewer than four on level 0.
SET pgmate.position_index_deferred_merges = on;
DO $$
BEGIN
  FOR i IN 1..8 LOOP
    INSERT INTO pgmate.games (source, white, moves, result)
      VALUES ('manual', 'deferred ' || i, (ARRAY['{e2e4,c7c5}', '{d2d4,d7d5,c2c4}'])[1 + i % 2]::move[], '0-1');
  END LOOP;
END $$;
SELECT count(*) >= 8 AS runs_deferred FROM pgmate.position_runs WHERE level = 0;
-- their blocks are staged apart, for the final merge to empty at once
SELECT bool_and(staged) AS deferred_runs_staged, (SELECT count(*) > 0 FROM pgmate.position_staged_blocks) AS staged_blocks
FROM pgmate.position_runs WHERE level = 0 AND created_at = now();
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT pgmate.position_index_merge(false) = sum(entries) AS level_merge_entries FROM pgmate.position_runs;
SELECT count(*) < 4 AS level_zero_merged FROM pgmate.position_runs WHERE level = 0;
SELECT bool_and(NOT staged) AS merged_runs_not_staged FROM pgmate.position_runs WHERE level > 0;
SELECT count(*) AS mismatches FROM index_mismatches;

-- A merge on several connections: parts, each a share of the keys, stay out of searches
-- until published together in place of their runs; a change to the index in between drops
-- them, and their publication fails (40001) with nothing changed.
DO $$
BEGIN
  FOR i IN 1..5 LOOP
    INSERT INTO pgmate.games (source, white, moves, result)
      VALUES ('manual', 'parts ' || i, (ARRAY['{c2c4,c7c5}', '{b1c3,d7d5,e2e4}'])[1 + i % 2]::move[], '1-0');
  END LOOP;
END $$;
SELECT array_agg(id ORDER BY id) AS level_zero FROM pgmate.position_runs WHERE level = 0 \gset
SELECT sum(entries) AS entries_before FROM pgmate.position_runs WHERE level >= 0 \gset
SELECT pgmate.position_index_merge_part(:'level_zero', 0, 2) AS part_0 \gset
SELECT pgmate.position_index_merge_part(:'level_zero', 1, 2) AS part_1 \gset
SELECT count(*) AS pending_parts, (SELECT runs FROM pgmate.position_index_size) = (SELECT count(*) FROM pgmate.position_runs WHERE level >= 0) AS size_ignores_them
FROM pgmate.position_runs WHERE level < 0;
SELECT count(*) AS mismatches_with_parts_pending FROM index_mismatches;
-- Only a whole merge of exactly these runs is published, at most a level above them:
-- anything else would drop entries or count them twice (22023, nothing changed).
SAVEPOINT partial;
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0]::bigint[], 1);
ROLLBACK TO partial;
SELECT pgmate.position_index_merge_publish((:'level_zero'::bigint[])[2:], ARRAY[:part_0, :part_1]::bigint[], 1);
ROLLBACK TO partial;
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0, :part_1]::bigint[], 100);
ROLLBACK TO partial;
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0, :part_1]::bigint[], 1) =
       (SELECT sum(entries) FROM pgmate.position_runs WHERE id IN (:part_0, :part_1)) AS published;
-- the runs merged are retired, out of searches, until removed on every connection at once
SELECT count(*) = cardinality(:'level_zero'::bigint[]) AS all_retired FROM pgmate.position_runs WHERE level < 0;
SELECT count(*) AS mismatches_with_runs_retired FROM index_mismatches;
SELECT pg_relation_filenode('pgmate.position_staged_blocks') AS staged_file \gset
SELECT pgmate.position_index_clean(0, 2) + pgmate.position_index_clean(1, 2) = cardinality(:'level_zero'::bigint[]) AS cleaned;
-- every staged run was retired: their table was emptied at once (a TRUNCATE: a new file)
SELECT count(*) AS staged_blocks_left, pg_relation_filenode('pgmate.position_staged_blocks') <> :staged_file AS emptied_at_once
FROM pgmate.position_staged_blocks;
SAVEPOINT bad_clean;
SELECT pgmate.position_index_clean(2, 2);
ROLLBACK TO bad_clean;
SELECT count(*) AS level_zero_left, (SELECT sum(entries) FROM pgmate.position_runs) = :entries_before AS same_entries
FROM pgmate.position_runs WHERE level = 0;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS orphan_blocks FROM orphan_blocks;
SELECT count(*) AS explorer_mismatches FROM explorer_mismatches;
DO $$
BEGIN
  FOR i IN 1..4 LOOP
    INSERT INTO pgmate.games (source, white, moves, result) VALUES ('manual', 'parts again ' || i, '{g2g3,g7g6}', '0-1');
  END LOOP;
END $$;
SELECT array_agg(id ORDER BY id) AS level_zero FROM pgmate.position_runs WHERE level = 0 \gset
SELECT pgmate.position_index_merge_part(:'level_zero', 0, 1) AS part_0 \gset
DELETE FROM pgmate.games WHERE white = 'parts again 1';  -- the index changes: the part is dropped
SAVEPOINT stale_part;
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0]::bigint[], 1);
ROLLBACK TO stale_part;
SELECT count(*) AS pending_parts FROM pgmate.position_runs WHERE level < 0;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS orphan_blocks FROM orphan_blocks;
SAVEPOINT bad_part;
SELECT pgmate.position_index_merge_part(:'level_zero', 2, 2);
ROLLBACK TO bad_part;
-- A staged run still live when the others are cleaned (an import that wrote after the
-- publication): its table is not emptied, the retired runs go block by block, it stays.
SELECT pgmate.position_index_merge(true) > 0 AS merged;
DO $$
BEGIN
  FOR i IN 1..4 LOOP
    INSERT INTO pgmate.games (source, white, moves, result) VALUES ('manual', 'staged ' || i, '{b2b3,b7b6}', '1-0');
  END LOOP;
END $$;
SELECT array_agg(id ORDER BY id) AS level_zero FROM pgmate.position_runs WHERE level = 0 \gset
SELECT pgmate.position_index_merge_part(:'level_zero', 0, 1) AS part_0 \gset
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0]::bigint[], 1) > 0 AS published;
INSERT INTO pgmate.games (source, white, moves, result) VALUES ('manual', 'staged late', '{b2b3,b7b6,c1b2}', '1-0');
SELECT pg_relation_filenode('pgmate.position_staged_blocks') AS staged_file \gset
SELECT pgmate.position_index_clean(0, 1) = 4 AS cleaned;
SELECT count(*) AS staged_runs_left, pg_relation_filenode('pgmate.position_staged_blocks') = :staged_file AS same_file,
       (SELECT count(*) > 0 FROM pgmate.position_staged_blocks) AS its_blocks_kept
FROM pgmate.position_runs WHERE staged;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS orphan_blocks FROM orphan_blocks;
RESET pgmate.position_index_deferred_merges;

-- Deletes and updates take games out; an update of other columns changes nothing.
DELETE FROM pgmate.games WHERE white IN ('ix A', 'loop 3', 'loop 7');
UPDATE pgmate.games SET moves = '{e2e4,e7e5,g1f3}' WHERE white = 'ix C';
UPDATE pgmate.games SET result = '1-0' WHERE white = 'ix E';
SELECT sum(entries) AS entries_before FROM pgmate.position_runs \gset
UPDATE pgmate.games SET event = 'renamed' WHERE white LIKE 'loop%';
SELECT sum(entries) = :entries_before AS tags_only_unchanged FROM pgmate.position_runs;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS orphan_blocks FROM orphan_blocks;
SELECT count(*) AS explorer_mismatches FROM explorer_mismatches;
-- An update of more than a tenth of the games builds the index again: its rows once each.
UPDATE pgmate.games SET result = CASE result WHEN '1-0' THEN '0-1' WHEN '0-1' THEN '1-0' ELSE result END;
SELECT sum(entries) = :entries_before AS same_entries, (SELECT count(*) FROM index_mismatches) AS mismatches,
       (SELECT count(*) FROM explorer_mismatches) AS explorer_mismatches
FROM pgmate.position_runs;
UPDATE pgmate.games SET result = CASE result WHEN '1-0' THEN '0-1' WHEN '0-1' THEN '1-0' ELSE result END;

-- One run after a merge; a rebuild gives the same entries.
SELECT pgmate.position_index_merge() = :entries_before AS merged_entries;
SELECT count(*) AS runs FROM pgmate.position_runs;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT pgmate.position_index_rebuild() = :entries_before AS rebuilt_entries;
SELECT count(*) AS mismatches FROM index_mismatches;
SELECT count(*) AS orphan_blocks FROM orphan_blocks;
SELECT runs, entries = :entries_before AS entries, bytes > 0 AS bytes FROM pgmate.position_index_size;

-- A game id beyond the index's 32 bits is refused, naming it; nothing is stored.
SAVEPOINT big_id;
INSERT INTO pgmate.games (id, moves) VALUES (4294967296, '{e2e4}');
ROLLBACK TO big_id;

-- Adding games needs no privilege on the index's tables: its trigger writes them as the
-- extension's owner.
CREATE ROLE pgmate_indexer;
GRANT USAGE ON SCHEMA pgmate TO pgmate_indexer;
GRANT INSERT ON pgmate.games TO pgmate_indexer;
GRANT USAGE ON SEQUENCE pgmate.games_id_seq TO pgmate_indexer;
SET ROLE pgmate_indexer;
INSERT INTO pgmate.games (white, moves) VALUES ('indexer', '{g1f3}');
RESET ROLE;
SELECT count(*) AS indexer_games FROM pgmate.games WHERE white = 'indexer';
SELECT count(*) AS mismatches FROM index_mismatches;

-- Truncation empties it; new games index again.
TRUNCATE pgmate.games CASCADE;
SELECT count(*) AS runs_after_truncate FROM pgmate.position_runs;
SELECT pgmate.import_pgn('1. d4 d5 2. c4 *') AS imported;
SELECT pgmate.position_count(play('startpos', '{d2d4,d7d5,c2c4}'::move[])) AS queens_gambit;
SELECT count(*) AS mismatches FROM index_mismatches;

ROLLBACK;
SELECT setval('pgmate.games_id_seq', :games_seq, :'games_called'::bool) IS NOT NULL AS sequence_restored;
SELECT count(*) AS mismatches FROM (
  SELECT 1 FROM pgmate.games g, game_positions(g.start, g.moves) p
  WHERE NOT EXISTS (SELECT 1 FROM pgmate.position_games(p.board) x WHERE x = g.id)) m;
