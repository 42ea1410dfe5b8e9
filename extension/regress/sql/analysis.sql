-- Engine analysis: lichess's formulas against values computed by hand, move classes and
-- accuracy of a game whose evaluations are given by hand, PGN with evaluations exported and
-- imported again, PGN as found (a contradicting Result tag, an ambiguous move, clocks), and
-- CALL pgmate.analyse with Stockfish.

-- win%, move accuracy and classes (the hand values: a literal transcription of lila's code)
SELECT round(pgmate.win_percent(0)::numeric, 6) AS even, round(pgmate.win_percent(100)::numeric, 6) AS pawn_up,
       round(pgmate.win_percent(-300)::numeric, 6) AS three_down, round(pgmate.win_percent(5000)::numeric, 6) AS ceiling;
SELECT round(pgmate.move_accuracy(60, 40)::numeric, 6) AS drop_20, pgmate.move_accuracy(40, 60) AS gain,
       round(pgmate.move_accuracy(90, 10)::numeric, 6) AS drop_80;
SELECT x AS chances_lost, pgmate.move_class(x) FROM unnest('{0.05,0.1,0.19,0.2,0.29,0.3,0.9}'::float8[]) x;
-- mates: lichess's rules (mover's view: into a mate from -6.75 and from -12, a mate let slip, a mate given)
SELECT pgmate.move_judgement(-675, NULL, NULL, -2) AS into_mate, pgmate.move_judgement(-1200, NULL, NULL, -5) AS lost_anyway,
       pgmate.move_judgement(NULL, 3, 800, NULL) AS mate_missed, pgmate.move_judgement(NULL, 3, NULL, -1) AS mate_turned,
       pgmate.move_judgement(NULL, 1, NULL, 0) AS mated_them, pgmate.move_judgement(25, NULL, -150, NULL) AS centipawns,
       pgmate.move_judgement(NULL, NULL, 10, NULL) AS unknown;
SELECT pgmate.eval_cp(NULL, 3) AS mates, pgmate.eval_cp(NULL, -1) AS mated, pgmate.eval_cp(NULL, 0) AS checkmated,
       pgmate.eval_cp(1500, NULL) AS clamped, pgmate.eval_cp(-31, NULL) AS plain;
SELECT side, round(accuracy::numeric, 6) AS accuracy, acpl, moves
FROM pgmate.accuracy_of_game('{20,30,25,-150,-140,-160,300,280,290,1000,1000}', true);
SELECT side, round(accuracy::numeric, 6) AS accuracy, acpl, moves
FROM pgmate.accuracy_of_game('{20,30,25,-150,-140,-160,300,280,290,1000,1000}', false);
SELECT count(*) FROM pgmate.accuracy_of_game('{20}', true);

-- A game evaluated by hand: the evaluations (White's view) of its 11 positions stored as
-- engine 'hand', with the engine's move where White threw away 175 centipawns.
INSERT INTO pgmate.games (white, black, result, moves)
VALUES ('Hand', 'Checked', '1-0', '{e2e4,e7e5,g1f3,b8c6,f1c4,g8f6,d2d3,f8c5,c2c3,d7d6}');
SELECT pgmate.save_position_evals('hand', 'by hand', jsonb_agg(jsonb_build_object(
         'board', p.board::text,
         'cp', CASE side_to_move(p.board) WHEN 'white' THEN c.cp ELSE -c.cp END, 'mate', NULL,
         'win', 0, 'draw', 1000, 'loss', 0, 'wdl_source', 'model',
         'best', CASE WHEN p.ply = 2 THEN 'd2d4' END, 'pv', NULL, 'depth', 1, 'nodes', 1, 'lines', NULL)))
FROM pgmate.games g, game_positions(g.start, g.moves) p
JOIN unnest('{20,30,25,-150,-140,-160,300,280,290,1000,1000}'::int[]) WITH ORDINALITY c(cp, n) ON c.n = p.ply + 1
WHERE g.white = 'Hand';
-- stored again: nothing new
SELECT pgmate.save_position_evals('hand', 'by hand', jsonb_build_array(jsonb_build_object(
         'board', 'startpos', 'cp', 99, 'win', 0, 'draw', 1000, 'loss', 0, 'wdl_source', 'model')));
-- The same scores as arrays, as pgmate import sends a PGN's: the same rows, without moves
SELECT pgmate.save_position_scores('hand scores', 'by hand', array_agg(position), array_agg(score_cp),
                                   array_agg(mate), array_agg(win), array_agg(draw), array_agg(loss))
FROM pgmate.position_evals WHERE engine = 'hand';
SELECT count(*) AS scores,
       count(*) FILTER (WHERE s.score_cp = h.score_cp AND (s.win, s.draw, s.loss) = (h.win, h.draw, h.loss)
                        AND s.wdl_source = 'model' AND s.best_move IS NULL AND s.depth IS NULL) AS equal
FROM pgmate.position_evals s JOIN pgmate.position_evals h USING (key, position)
WHERE s.engine = 'hand scores' AND h.engine = 'hand';
-- stored again: nothing new
SELECT pgmate.save_position_scores('hand scores', 'by hand', '{startpos}', '{99}', '{NULL}', '{0}', '{1000}', '{0}');
DELETE FROM pgmate.position_evals WHERE engine = 'hand scores';
SELECT ply, side, san, cp_before, cp_after, round(win_before::numeric, 2) AS win_before,
       round(win_after::numeric, 2) AS win_after, round(accuracy::numeric, 2) AS accuracy, class, best_san
FROM pgmate.move_evals WHERE engine = 'hand' ORDER BY ply;
SELECT side, round(accuracy::numeric, 6) AS accuracy, acpl, moves, inaccuracies, mistakes, blunders, complete
FROM pgmate.game_accuracy WHERE engine = 'hand' ORDER BY side DESC;
SELECT player, games, moves, round(accuracy::numeric, 6) AS accuracy, acpl, blunders
FROM pgmate.player_accuracy() WHERE engine = 'hand' ORDER BY player;
SELECT count(*) FROM pgmate.player_accuracy(ARRAY[-1]::bigint[]);

-- Exported with its evaluations, and read back: the same moves, the same evaluations
SELECT pgmate.to_pgn_with_evals(g) FROM pgmate.games g WHERE white = 'Hand';
SELECT pgmate.import_pgn(pgmate.to_pgn_with_evals(g)) FROM pgmate.games g WHERE white = 'Hand';
SELECT count(*) AS games, count(DISTINCT moves) AS distinct_moves FROM pgmate.games WHERE white = 'Hand';
SELECT count(*) AS evaluations, count(*) FILTER (WHERE p.score_cp = h.score_cp) AS equal
FROM pgmate.position_evals p JOIN pgmate.position_evals h USING (key, position)
WHERE p.engine = 'pgn' AND h.engine = 'hand';
-- the start position has no comment to carry it, so pgn's evaluations miss the first move
SELECT count(*) AS pgn_moves FROM pgmate.move_evals m JOIN pgmate.games g ON g.id = m.game
WHERE m.engine = 'pgn' AND g.white = 'Hand' AND g.id = (SELECT min(id) FROM pgmate.games WHERE white = 'Hand');

-- Incomplete analysis: classes, but no accuracy
DELETE FROM pgmate.position_evals
WHERE engine = 'hand' AND position = without_clocks(play('startpos', '{e2e4,e7e5,g1f3,b8c6,f1c4}'::move[]));
SELECT side, accuracy, moves, blunders, complete FROM pgmate.game_accuracy
WHERE engine = 'hand' AND game = (SELECT min(id) FROM pgmate.games WHERE white = 'Hand') ORDER BY side DESC;

-- PGN as found
SELECT result, movetext_result, clocks, evals->0->>'cp' AS first_eval
FROM pgn_games('[Result "1-0"]

1. e4 { [%eval 0.31] [%clk 0:01:00] } e5 { [%clk 0:00:59.5] } 0-1');
SELECT moves FROM pgn_games('[FEN "4k3/8/8/6p1/8/5N2/8/1N2K3 w - - 0 1"]

1. Nd2 Kd7 2. Nxg5 *');
SELECT moves FROM pgn_games('[FEN "4k3/8/8/6p1/8/5N2/8/1N2K3 w - - 0 1"]

1. Nd2 Kd7 2. Ke2 *');

-- Bad input
\set VERBOSITY terse
SELECT pgmate.save_position_evals('x', 'y', '[{"board": "8/8/8/8/8/8/8/8 w - - 0 1", "cp": 0, "win": 0, "draw": 1000, "loss": 0, "wdl_source": "model"}]');
SELECT pgmate.save_position_evals('x', 'y', '[{"board": "startpos", "cp": 0, "mate": 2, "win": 0, "draw": 1000, "loss": 0, "wdl_source": "model"}]');
SELECT pgmate.save_position_evals('x', 'y', '[{"board": "startpos", "cp": 0, "win": 10, "draw": 1000, "loss": 0, "wdl_source": "model"}]');
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source)
VALUES (1, 'startpos', 'x', 'y', 0, 0, 1000, 0, 'model');
SELECT pgmate.save_position_scores('x', 'y', '{startpos}', '{0,1}', '{NULL,NULL}', '{0,0}', '{1000,1000}', '{0,0}');
SELECT pgmate.save_position_scores('x', 'y', '{startpos,startpos}', '{0,1}', '{NULL}', '{0,0}', '{1000,1000}', '{0,0}');
SELECT pgmate.save_position_scores('x', 'y', '{startpos}', '{0}', '{NULL}', '{10}', '{1000}', '{0}');
SELECT pgmate.save_position_scores('x', 'y', '{8/8/8/8/8/8/8/8 w - - 0 1}', '{0}', '{NULL}', '{0}', '{1000}', '{0}');
CALL pgmate.analyse('SELECT id FROM pgmate.games', '"random"');
CALL pgmate.analyse('SELECT id FROM pgmate.games', '"uci:/nonexistent/engine"');
CALL pgmate.analyse('SELECT white FROM pgmate.games', '"uci:/usr/games/stockfish"');
CALL pgmate.analyse('SELECT id FROM pgmate.games; DROP TABLE pgmate.games', '"uci:/usr/games/stockfish"');
CALL pgmate.analyse('SELECT id FROM pgmate.games', '"uci:/usr/games/stockfish"', '{"nodes": 0}');
CALL pgmate.analyse('SELECT id FROM pgmate.games', '"uci:/usr/games/stockfish"', '{"speed": 1}');
CALL pgmate.analyse('SELECT id FROM pgmate.games', '"uci:/usr/games/stockfish"', '{"warm": "yes"}');
CALL pgmate.analyse(NULL, '"uci:/usr/games/stockfish"');
\set VERBOSITY default
CREATE ROLE analysis_user;
GRANT USAGE ON SCHEMA pgmate TO analysis_user;
-- not PUBLIC's: a role needs the grant, and a UCI engine also pg_execute_server_program
SET ROLE analysis_user;
CALL pgmate.analyse('SELECT 1::bigint', '"uci:/usr/games/stockfish"');
RESET ROLE;
GRANT EXECUTE ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) TO analysis_user;
SET ROLE analysis_user;
CALL pgmate.analyse('SELECT 1::bigint', '"uci:/usr/games/stockfish"');
RESET ROLE;
DROP OWNED BY analysis_user;
DROP ROLE analysis_user;

-- Stockfish: every position of the two games once (they are the same game: one row per
-- position), each with Stockfish's WDL and move; a second call adds nothing
SET client_min_messages = warning;  -- the summary NOTICE holds a duration
CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE white = ''Hand''', '"uci:/usr/games/stockfish"',
                    '{"nodes": 2000, "jobs": 2}');
SELECT engine, limits, count(*), count(*) FILTER (WHERE wdl_source = 'engine') AS engine_wdl,
       count(best_move) AS best_moves, bool_and(nodes BETWEEN 1 AND 3000) AS nodes_in_limit
FROM pgmate.position_evals WHERE engine LIKE 'Stockfish%' GROUP BY engine, limits;
CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE white = ''Hand''', '"uci:/usr/games/stockfish"',
                    '{"nodes": 2000}');
SELECT count(*) FROM pgmate.position_evals WHERE engine LIKE 'Stockfish%';
RESET client_min_messages;
SELECT count(*) AS moves, bool_and(class IS NULL OR class IN ('inaccuracy', 'mistake', 'blunder')) AS classes_known
FROM pgmate.move_evals m JOIN pgmate.games g ON g.id = m.game
WHERE m.engine LIKE 'Stockfish%' AND g.id = (SELECT min(id) FROM pgmate.games WHERE white = 'Hand');
SELECT complete, accuracy BETWEEN 0 AND 100 AS accuracy_in_range
FROM pgmate.game_accuracy a WHERE engine LIKE 'Stockfish%'
  AND game = (SELECT min(id) FROM pgmate.games WHERE white = 'Hand') ORDER BY side DESC;
-- MultiPV: the policy of eval_targets spreads over the lines, best first
SET client_min_messages = warning;
CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE white = ''Hand''', '"uci:/usr/games/stockfish"',
                    '{"depth": 6, "multipv": 3}');
RESET client_min_messages;
SELECT cardinality(moves) AS lines, policy[1] = 1 AS best_first, policy[2] <= 1 AND policy[3] <= policy[1] AS weights_fall,
       moves[1] = best_move AS best_is_first, wdl IS NOT NULL AS has_wdl
FROM pgmate.eval_targets WHERE limits = 'depth=6,multipv=3' AND ply = 0 LIMIT 1;

-- statement_timeout stops an analysis (its engines with it); what was saved stays
SET statement_timeout = '500ms';
CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE white = ''Hand''', '"uci:/usr/games/stockfish"',
                    '{"depth": 40}');
RESET statement_timeout;

-- The suites after this one start from an empty game table, as they would without it.
TRUNCATE pgmate.games, pgmate.position_evals RESTART IDENTITY CASCADE;
