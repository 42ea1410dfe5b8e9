-- Who decides an evaluation: every row of pgmate.position_evals has a writer, the role that
-- stored it; a session reads its own rows, those of the roles it names in
-- pgmate.eval_writers and the extension owner's (pgmate.visible_evals), and a row that
-- cannot be believed of its position is refused whoever writes it.
CREATE ROLE evals_forger;
CREATE ROLE evals_honest;
GRANT USAGE ON SCHEMA pgmate TO evals_forger, evals_honest;
GRANT SELECT ON pgmate.games, pgmate.visible_evals, pgmate.move_evals TO evals_forger, evals_honest;
GRANT SELECT, INSERT ON pgmate.position_evals TO evals_forger, evals_honest;
-- a game of its own (its id given, so no sequence moves for the suites that follow)
INSERT INTO pgmate.games (id, white, black, result, moves)
VALUES (900001, 'Writers', 'Test', '1-0', '{f2f4,e7e6,g2g4,d8h4}');

-- What the second security review forged: refused, each with its reason (22023)
SET ROLE evals_forger;
\set VERBOSITY default
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, lines)
SELECT board_key(b), without_clocks(b), 'Stockfish 15.1', 'nodes=5000', 20, 500, 0, 500, 'engine', 'e2e5', '{e2e5,a7a1}', NULL
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s;
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, lines)
SELECT board_key(b), without_clocks(b), 'Stockfish 15.1', 'nodes=5000', 20, 500, 0, 500, 'engine', 'g2g4', '{g2g4}', '{"not": "an array"}'
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s;
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, lines)
SELECT board_key(b), without_clocks(b), 'Stockfish 15.1', 'nodes=5000', 2000000000, 500, 0, 500, 'engine', 'g2g4', '{g2g4}', NULL
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s;
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, lines)
SELECT board_key(b), without_clocks(b), 'Stockfish 15.1', 'nodes=5000', 20, 500, 0, 500, 'engine', 'g2g4', '{g2g4}',
       '[{"move": "g2g4", "cp": 20}, {"move": "g2g4", "cp": 10}]'
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s;
\set VERBOSITY terse
-- A lie that is legal is stored, but as the forger's, whatever writer it names
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, writer)
SELECT board_key(b), without_clocks(b), 'Stockfish 15.1', 'nodes=5000', -900, 0, 0, 1000, 'engine', 'g2g4', '{g2g4}', 'postgres'
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s
RETURNING writer, score_cp;
SELECT count(*) AS forged_seen FROM pgmate.visible_evals WHERE score_cp = -900;
RESET ROLE;

-- Nobody else reads it: not the superuser's analysis of the game, not another role's views
SELECT count(*) AS seen_by_owner FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1' AND limits = 'nodes=5000';
SELECT count(*) AS positions_to_analyse FROM pgmate.analysis_positions('{900001}', 'Stockfish 15.1', 'nodes=5000');
SET ROLE evals_honest;
SELECT count(*) AS seen_by_honest FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
-- unless that role is named
SET pgmate.eval_writers = 'evals_forger';
SELECT score_cp, writer FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
SET pgmate.eval_writers = '*';
SELECT score_cp, writer FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
RESET pgmate.eval_writers;
-- The honest role stores its own evaluation of the same position: both rows are kept, and
-- each role reads its own first
SELECT pgmate.save_position_evals('Stockfish 15.1', 'nodes=5000', jsonb_build_array(jsonb_build_object(
         'board', play('startpos', '{f2f4,e7e6}'::move[])::text, 'cp', 35, 'mate', NULL, 'win', 60, 'draw', 900,
         'loss', 40, 'wdl_source', 'engine', 'best', 'g1f3', 'pv', 'g1f3 d7d5', 'depth', 10, 'nodes', 5000,
         'lines', NULL))) AS saved;
SET pgmate.eval_writers = 'evals_forger';
SELECT score_cp, writer FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
RESET pgmate.eval_writers;
RESET ROLE;
SELECT writer, score_cp FROM pgmate.position_evals WHERE engine = 'Stockfish 15.1' ORDER BY score_cp;
SET pgmate.eval_writers = 'evals_forger, evals_honest';
SELECT score_cp, writer FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
SET pgmate.eval_writers = 'evals_honest, evals_forger';
SELECT score_cp, writer FROM pgmate.visible_evals WHERE engine = 'Stockfish 15.1';
RESET pgmate.eval_writers;

-- The move_evals view reads only rows a session reads: the honest role's evaluations of
-- the game's first two positions give its first move an evaluation before and after
SET ROLE evals_honest;
SELECT pgmate.save_position_evals('pgn', '', jsonb_agg(jsonb_build_object(
         'board', play('startpos', m)::text, 'cp', cp, 'mate', NULL, 'win', 0, 'draw', 1000, 'loss', 0,
         'wdl_source', 'model', 'best', NULL, 'pv', NULL, 'depth', NULL, 'nodes', NULL, 'lines', NULL))) AS saved
FROM (VALUES ('{}'::move[], 20), ('{f2f4}'::move[], 30)) v(m, cp);
SELECT ply, san, cp_before, cp_after FROM pgmate.move_evals WHERE game = 900001 AND engine = 'pgn';
RESET ROLE;
SELECT count(*) AS seen_by_owner FROM pgmate.move_evals WHERE game = 900001 AND engine = 'pgn';
SET pgmate.eval_writers = 'evals_honest';
SELECT ply, san, cp_before, cp_after FROM pgmate.move_evals WHERE game = 900001 AND engine = 'pgn';
RESET pgmate.eval_writers;

-- The table's owner may name the writer (a restore keeps whose each row was)
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, writer)
SELECT board_key(b), without_clocks(b), 'Restored', '', 5, 0, 1000, 0, 'model', 'evals_honest'
FROM (SELECT 'startpos'::board AS b) s
RETURNING writer;
-- With triggers off (a replica's apply), the check constraint refuses all the same
SET session_replication_role = replica;
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, writer)
SELECT board_key(b), without_clocks(b), 'Replica', '', 5, 0, 1000, 0, 'model', 'e2e5', 'evals_honest'
FROM (SELECT 'startpos'::board AS b) s;
RESET session_replication_role;
-- the setting is a list of names; a name of no role is passed over
SET pgmate.eval_writers = '"unterminated';
SET ROLE evals_honest;
SET pgmate.eval_writers = 'no_such_role, evals_forger';
SELECT engine, writer FROM pgmate.visible_evals ORDER BY engine, writer;
RESET pgmate.eval_writers;
RESET ROLE;

DELETE FROM pgmate.position_evals WHERE writer IN ('evals_forger'::regrole, 'evals_honest'::regrole);
DELETE FROM pgmate.games WHERE id = 900001;
DROP OWNED BY evals_forger, evals_honest;
DROP ROLE evals_forger, evals_honest;
