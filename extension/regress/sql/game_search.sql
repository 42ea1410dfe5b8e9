-- Material and pattern search, and finding copies of a game: each answer checked against
-- testing every position (game_positions). In a transaction that is rolled back, so the
-- games of the other suites stay as they were.
SELECT last_value AS games_seq, is_called AS games_called FROM pgmate.games_id_seq \gset
BEGIN;

SELECT material('startpos');
SELECT material('8/8/4k3/8/2r5/8/3RP3/4K3 w - - 0 1');
SELECT matches_pattern('startpos', 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR') AS everything,
       matches_pattern('startpos', '8/8/8/8/......../8/8/8') AS rank_4_empty,
       matches_pattern('startpos', '8/8/8/8/3P4/8/8/8') AS pawn_on_d4,
       matches_pattern(play('startpos', '{d2d4}'::move[]), '8/8/8/8/3P4/8/???.????/8') AS pawn_moved_d2_d4;

-- Games to search: an endgame reached by a rook-and-pawn ending, a queen promotion, a short
-- opening and a copy of it with other tags.
INSERT INTO pgmate.games (source, white, start, moves, result) VALUES
  ('manual', 'rook ending', '8/8/4k3/8/2r5/8/3RPn2/4K3 w - - 0 1', '{e1f2,c4c2,d2c2}', '1/2-1/2'),
  ('manual', 'promotion', '4k3/P7/8/8/8/8/8/4K3 w - - 0 1', '{a7a8q,e8d7,a8b7}', '1-0'),
  ('manual', 'opening', 'startpos', '{d2d4,d7d5,c2c4}', '*'),
  ('manual', 'opening copy', 'startpos', '{d2d4,d7d5,c2c4}', '1-0');

-- Every material and pattern search against testing each position (the probes' material
-- is written canonically, as material() writes it).
CREATE TEMP TABLE probes (material text, pattern text);
INSERT INTO probes VALUES ('KRPvKR', '8/8/8/8/2?5/8/3R4/8'), ('KRPvKRN', '8/8/4k3/8/8/8/8/8'),
  ('KRvK', '8/8/8/8/3P4/8/8/8'), ('KQvK', 'Q7/8/8/8/8/8/8/8'), ('KPvK', '8/P7/8/8/8/8/8/8'),
  ('KQRRBBNNPPPPPPPPvKQRRBBNNPPPPPPPP', '8/8/8/3p4/2PP4/8/8/8');
SELECT p.material, g.white,
       reaches_material(g.start, g.moves, p.material) AS reaches,
       pgmate.game_reaches_material(g, p.material) AS by_signature,
       EXISTS (SELECT 1 FROM game_positions(g.start, g.moves) x WHERE material(x.board) = p.material) AS truth
FROM probes p, pgmate.games g WHERE g.source = 'manual' AND g.white IN ('rook ending', 'promotion', 'opening')
ORDER BY p.material, g.white;
SELECT count(*) AS games_and_patterns,
       count(*) FILTER (WHERE reaches_pattern(g.start, g.moves, p.pattern) <> truth) AS pattern_mismatches,
       count(*) FILTER (WHERE pgmate.game_reaches_pattern(g, p.pattern) <> truth) AS by_signature_mismatches,
       count(*) FILTER (WHERE NOT may_match_pattern(g.square_signature, p.pattern)) AS ruled_out_by_signature
FROM probes p, pgmate.games g,
     LATERAL (SELECT EXISTS (SELECT 1 FROM game_positions(g.start, g.moves) x WHERE matches_pattern(x.board, p.pattern)) AS truth) t
WHERE g.white IN ('rook ending', 'promotion', 'opening');
SELECT count(*) AS pattern_hits FROM probes p, pgmate.games g
WHERE g.white IN ('rook ending', 'promotion', 'opening') AND reaches_pattern(g.start, g.moves, p.pattern);

-- The signature rules games out without a replay, never a game that reached the material.
SELECT white, may_reach_material(material_signature, 'KRvK') AS may_reach_krvk,
       may_reach_material(material_signature, 'KQvK') AS may_reach_kqvk
FROM pgmate.games WHERE white IN ('rook ending', 'promotion', 'opening') ORDER BY white;

-- Copies of a game share game_hash, whatever their tags; another game has another.
SELECT count(DISTINCT game_hash) AS hashes, bool_and(game_hash = game_hash(start, moves)) AS as_computed
FROM pgmate.games WHERE white IN ('opening', 'opening copy');
SELECT (SELECT game_hash FROM pgmate.games WHERE white = 'opening') <>
       (SELECT game_hash FROM pgmate.games WHERE white = 'rook ending') AS differ;

-- Move sequences: pgmate's own move[] operators (by the moves' bits) answer as PostgreSQL's
-- anyarray ones, NULL elements included, with and without the GIN operator class.
SELECT o.oprname, o.oprcode FROM pg_operator o
WHERE o.oprleft = 'move[]'::regtype AND o.oprright = 'move[]'::regtype AND o.oprname IN ('&&', '@>', '<@')
ORDER BY o.oprname;
CREATE TEMP TABLE sequences AS
  SELECT g AS id, (SELECT array_agg((ARRAY['e2e4', 'd2d4', 'e7e8n', 'a2a1q', 'g1f3', 'e1g1', 'b1c3'])[1 + (g * 5 + i * 3) % 7]::move)
                   FROM generate_series(1, g % 6) i) AS moves
  FROM generate_series(1, 600) g;
INSERT INTO sequences VALUES (1001, '{e2e4,NULL}'), (1002, '{NULL}'), (1003, '{}');
CREATE TEMP TABLE sequence_probes (n serial, probe move[]);
INSERT INTO sequence_probes (probe) VALUES ('{e2e4}'), ('{e7e8n,a2a1q}'), ('{}'), ('{NULL}'), ('{e2e4,NULL}'),
  ('{g1f3,b1c3,e1g1}'), ('{a7a8r}'), ('{{e2e4,d2d4},{g1f3,b1c3}}');
SELECT count(*) FILTER (WHERE (s.moves && p.probe) IS DISTINCT FROM (s.moves OPERATOR(pg_catalog.&&) p.probe)) AS overlap_differs,
       count(*) FILTER (WHERE (s.moves @> p.probe) IS DISTINCT FROM (s.moves OPERATOR(pg_catalog.@>) p.probe)) AS contains_differs,
       count(*) FILTER (WHERE (s.moves <@ p.probe) IS DISTINCT FROM (s.moves OPERATOR(pg_catalog.<@) p.probe)) AS contained_differs,
       count(*) FILTER (WHERE s.moves && p.probe) AS overlaps, count(*) FILTER (WHERE s.moves @> p.probe) AS contains,
       count(*) FILTER (WHERE s.moves <@ p.probe) AS contained
FROM sequences s, sequence_probes p;
CREATE TEMP TABLE scanned AS
  SELECT p.n, (SELECT count(*) FROM sequences s WHERE s.moves && p.probe) AS overlaps,
         (SELECT count(*) FROM sequences s WHERE s.moves @> p.probe) AS contains,
         (SELECT count(*) FROM sequences s WHERE s.moves <@ p.probe) AS contained
  FROM sequence_probes p;
CREATE INDEX ON sequences USING gin (moves);
ANALYZE sequences;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM sequences WHERE moves && '{e7e8n,d2d1n}'::move[];
SELECT count(*) AS probes, count(*) FILTER (WHERE
      (SELECT count(*) FROM sequences s WHERE s.moves && p.probe) <> scanned.overlaps
   OR (SELECT count(*) FROM sequences s WHERE s.moves @> p.probe) <> scanned.contains
   OR (SELECT count(*) FROM sequences s WHERE s.moves <@ p.probe) <> scanned.contained) AS index_differs
FROM sequence_probes p JOIN scanned USING (n);
RESET enable_seqscan;

ROLLBACK;
SELECT setval('pgmate.games_id_seq', :games_seq, :'games_called'::bool) IS NOT NULL AS sequence_restored;

-- Bad input names itself, as 22P02 (invalid text representation).
SELECT material_signature('startpos', '{e2e5}') IS NULL AS illegal_game_null,
       square_signature('startpos', '{e2e5}') IS NULL AS no_squares_either;  -- the CHECK reports it
SELECT reaches_material('startpos', '{}', 'KRPKR');
SELECT reaches_material('startpos', '{}', 'KRXvK');
SELECT matches_pattern('startpos', '8/8/8');
SELECT matches_pattern('startpos', '8/8/8/8/8/8/8/7z');
-- a bad pattern after good ones at the same call site is still refused (parsed texts are
-- kept only while they stay the same)
SELECT p, matches_pattern('startpos', p) FROM (VALUES ('8/8/8/8/3P4/8/8/8'), ('8/8/8/8/8/8/8/8'), ('8/8/8/8/3P4/8/8/8x')) v (p);
DO $$
DECLARE bad text;
BEGIN
  FOREACH bad IN ARRAY ARRAY['SELECT reaches_material(''startpos'', ''{}'', ''KRPKR'')',
                             'SELECT may_reach_material(0, ''Kv'')',
                             'SELECT reaches_pattern(''startpos'', ''{}'', ''9/8/8/8/8/8/8/8'')',
                             'SELECT may_match_pattern(''\x00'', ''8/8/8/8/8/8/8/8'')'] LOOP
    BEGIN
      EXECUTE bad;
      RAISE EXCEPTION 'no error from %', bad;
    EXCEPTION WHEN invalid_text_representation THEN NULL;
    END;
  END LOOP;
END $$;
