-- CALL pgmate.selfplay: MCTS self-play inside the backend (pure MCTS, so no worker is
-- needed): the games and positions it stores, determinism for a seed, the analysis
-- views, bad input, transaction blocks, and statement_timeout.
-- The NOTICE after each game carries its rates in a DETAIL, hidden by terse verbosity.
\set VERBOSITY terse
CALL pgmate.selfplay(3, 16, NULL, 2, '{"seed": 7, "max_plies": 60}');
-- (earlier suites leave games of their own: self-play games are told apart by source
-- and run, and named by round, not id)
SELECT source, event, round, white, black, result, termination, ply_count, network_id,
       date = to_char(current_date, 'YYYY.MM.DD') AS dated_today
  FROM pgmate.games WHERE source = 'selfplay' ORDER BY round;
SELECT round, selfplay->>'run' AS run, selfplay->'seed' AS seed, selfplay->'index' AS index,
       selfplay->'simulations' AS simulations, selfplay->'parallel' AS parallel,
       selfplay->'max_plies' AS max_plies, selfplay->>'evaluator' AS evaluator,
       jsonb_typeof(selfplay->'seconds') AS seconds
  FROM pgmate.games WHERE source = 'selfplay' ORDER BY round;
-- the moves (they pin the run: the same seed must give them again)
SELECT round, moves[1:8] AS first_moves, md5(moves::text) AS all_moves
  FROM pgmate.games WHERE source = 'selfplay' ORDER BY round;

-- one position per ply, 0 .. n-1; each is the game's position at that ply, lists its
-- legal moves, and records the move the game went on with
SELECT g.round, g.ply_count, count(*) AS positions, min(p.ply) AS first_ply, max(p.ply) AS last_ply,
       bool_and(p.board = gp.board) AS boards_match,
       bool_and(p.played = g.moves[p.ply + 1]) AS played_is_next_move,
       bool_and(p.moves = ARRAY(SELECT move FROM legal_moves(p.board))) AS legal_moves
  FROM pgmate.games g
  JOIN pgmate.selfplay_positions p ON p.game_id = g.id
  JOIN game_positions(g.start, g.moves) gp ON gp.ply = p.ply
  WHERE g.source = 'selfplay'
  GROUP BY g.round, g.ply_count ORDER BY g.round;
-- the search's statistics are well formed
SELECT bool_and((SELECT sum(v) FROM unnest(visits) v) > 0) AS every_position_visited,
       bool_and(abs((SELECT sum(x) FROM unnest(priors) x) - 1) < 1e-4) AS priors_sum_to_1,
       bool_and(value BETWEEN -1 AND 1) AS values_in_range,
       bool_and(cardinality(moves) = cardinality(visits)) AS one_count_per_move,
       count(*) AS positions
  FROM pgmate.selfplay_positions;
SELECT ply, visits, round(value::numeric, 4) AS value, played
  FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id
  WHERE g.source = 'selfplay' AND g.round = '1' AND ply < 4 ORDER BY ply;

-- the same seed plays the same games again, searches included; another seed does not
CALL pgmate.selfplay(3, 16, NULL, 2, '{"seed": 7, "max_plies": 60, "run": "again"}');
SELECT a.round, a.moves = b.moves AS same_moves,
       (SELECT array_agg(visits::text ORDER BY ply) FROM pgmate.selfplay_positions WHERE game_id = a.id) =
       (SELECT array_agg(visits::text ORDER BY ply) FROM pgmate.selfplay_positions WHERE game_id = b.id)
         AS same_visits
  FROM pgmate.games a JOIN pgmate.games b USING (round)
  WHERE a.selfplay->>'run' = 'sql' AND b.selfplay->>'run' = 'again' ORDER BY a.round;
CALL pgmate.selfplay(1, 16, NULL, 1, '{"seed": 8, "max_plies": 60, "run": "other seed"}');
SELECT count(*) AS games_like_seed_7 FROM pgmate.games a, pgmate.games b
  WHERE a.selfplay->>'run' = 'other seed' AND b.selfplay->>'run' = 'sql' AND a.moves = b.moves;
-- without a seed a fresh one is drawn and stored; it replays the game
CALL pgmate.selfplay(1, 8, NULL, 1, '{"max_plies": 3, "run": "unseeded"}');
SELECT selfplay->>'seed' AS seed FROM pgmate.games WHERE selfplay->>'run' = 'unseeded' \gset
CALL pgmate.selfplay(1, 8, NULL, 1, jsonb_build_object('seed', :'seed'::numeric, 'max_plies', 3, 'run', 'replayed'));
SELECT a.moves = b.moves AS replayed FROM pgmate.games a, pgmate.games b
  WHERE a.selfplay->>'run' = 'unseeded' AND b.selfplay->>'run' = 'replayed';
DELETE FROM pgmate.games WHERE source = 'selfplay' AND selfplay->>'run' <> 'sql';
SELECT count(*) AS positions_left FROM pgmate.selfplay_positions;

-- analysis over the first run's games
SELECT * FROM pgmate.selfplay_results;
SELECT * FROM pgmate.selfplay_lengths(20);
SELECT * FROM pgmate.selfplay_first_moves ORDER BY games DESC, first_move;
SELECT g.round, s.ply, s.board, s.disagreement, s.prior_move, s.prior_share, s.search_move, s.visit_share
  FROM (SELECT * FROM pgmate.selfplay_surprises LIMIT 5) s JOIN pgmate.games g ON g.id = s.game_id
  ORDER BY s.disagreement DESC, g.round, s.ply;
SELECT count(*) = (SELECT count(*) FROM pgmate.selfplay_positions) AS every_position_ranked
  FROM pgmate.selfplay_surprises;
SELECT t.ply, t.policy, t.z, t.wdl, t.q FROM pgmate.training_targets t JOIN pgmate.games g ON g.id = t.game_id
  WHERE g.round = '1' AND t.ply < 3 ORDER BY t.ply;
-- the stored policy target is the visit shares, and the repetition count is the game's
SELECT bool_and(abs(a - b) < 1e-6) AS policy_is_visit_shares
  FROM pgmate.selfplay_positions p, LATERAL unnest(p.policy, pgmate.visit_policy(p.visits)) AS u(a, b);
SELECT bool_and(p.repetitions = (SELECT count(*) FROM pgmate.selfplay_positions e
                                  WHERE e.game_id = p.game_id AND e.ply < p.ply
                                    AND board_key(e.board) = board_key(p.board)))
         AS repetitions_counted
  FROM pgmate.selfplay_positions p;
SELECT count(*) AS targets, bool_and(abs((SELECT sum(x) FROM unnest(policy) x) - 1) < 1e-5) AS policies_sum_to_1,
       bool_and(z = 0) AS all_draws_so_z_is_0
  FROM pgmate.training_targets;
-- the disagreement function: total variation distance between visits and priors
SELECT pgmate.policy_disagreement('{5,5}', '{0.5,0.5}') AS agree,
       pgmate.policy_disagreement('{10,0}', '{0,1}') AS disjoint,
       pgmate.policy_disagreement('{3,1}', '{0.5,0.5}') AS quarter,
       pgmate.policy_disagreement('{0,0}', '{0.5,0.5}') AS no_visits,
       pgmate.policy_disagreement('{1,2,3}', '{0.5,0.5}') AS different_lengths;
SELECT pgmate.visit_policy('{1,3,0}') AS policy, pgmate.visit_policy('{0,0}') AS no_visits;
-- a decisive game: the value target is +1 for the winner's positions, -1 for the loser's
INSERT INTO pgmate.games (source, result, termination, moves)
  VALUES ('selfplay', '0-1', 'checkmate', '{f2f3,e7e5,g2g4,d8h4}') RETURNING id AS mate_id \gset
INSERT INTO pgmate.selfplay_positions
  SELECT :mate_id, gp.ply, gp.board, ARRAY(SELECT move FROM legal_moves(gp.board)),
         array_fill(1, ARRAY[legal_move_count(gp.board)]),
         array_fill(1.0 / legal_move_count(gp.board), ARRAY[legal_move_count(gp.board)])::real[], 0, gp.move
  FROM game_positions('startpos', '{f2f3,e7e5,g2g4,d8h4}') gp WHERE gp.move IS NOT NULL;
SELECT ply, side_to_move(board), z, wdl, cardinality(history) AS history, repetitions
  FROM pgmate.training_targets WHERE game_id = :mate_id ORDER BY ply;
-- the history is the game's previous positions, newest first: the network's input again
SELECT bool_and(t.history = ARRAY(SELECT gp.board FROM game_positions('startpos', '{f2f3,e7e5,g2g4,d8h4}') gp
                                   WHERE gp.ply < t.ply AND gp.ply >= t.ply - 3 ORDER BY gp.ply DESC))
         AS history_is_the_game
  FROM pgmate.training_targets t WHERE t.game_id = :mate_id;
SELECT * FROM pgmate.selfplay_results;
SELECT * FROM pgmate.selfplay_lengths();
DELETE FROM pgmate.games WHERE id = :mate_id;

-- bad input: nothing is played or stored, and the SQLSTATE says why
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE statement;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
SELECT label, pg_temp.sqlstate_of(statement) AS error FROM (VALUES
  ('negative games',       $$CALL pgmate.selfplay(-1, 16)$$),
  ('zero simulations',     $$CALL pgmate.selfplay(1, 0)$$),
  ('zero parallel',        $$CALL pgmate.selfplay(1, 16, NULL, 0)$$),
  ('NULL games',           $$CALL pgmate.selfplay(NULL, 16)$$),
  ('unknown option',       $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"speed": 3}')$$),
  ('bad option value',     $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"max_plies": "lots"}')$$),
  ('option out of range',  $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"dirichlet_weight": 2}')$$),
  ('option given twice',   $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"max_plies": 5, "max-plies": 6}')$$),
  ('null option',          $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"seed": null}')$$),
  ('argument as option',   $$CALL pgmate.selfplay(1, 16, NULL, 1, '{"simulations": 800}')$$),
  ('options not an object', $$CALL pgmate.selfplay(1, 16, NULL, 1, '[1, 2]')$$),
  ('options a string',     $$CALL pgmate.selfplay(1, 16, NULL, 1, '"fast"')$$),
  ('unknown network',      $$CALL pgmate.selfplay(1, 16, 999)$$),
  ('no games',             $$CALL pgmate.selfplay(0, 16)$$),
  ('empty histogram bucket', $$SELECT pgmate.selfplay_lengths(0)$$)
) AS t(label, statement);
SELECT count(*) AS selfplay_games FROM pgmate.games WHERE source = 'selfplay';

-- inside a transaction block the games commit or roll back with it
BEGIN;
CALL pgmate.selfplay(2, 8, NULL, 2, '{"seed": 1, "max_plies": 10, "run": "rolled back"}');
SELECT count(*) AS games_in_transaction FROM pgmate.games WHERE selfplay->>'run' = 'rolled back';
ROLLBACK;
SELECT count(*) AS games_after_rollback,
       (SELECT count(*) FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id
         WHERE g.selfplay->>'run' = 'rolled back') AS positions_after_rollback
  FROM pgmate.games WHERE selfplay->>'run' = 'rolled back';
BEGIN;
CALL pgmate.selfplay(2, 8, NULL, 2, '{"seed": 1, "max_plies": 10, "run": "committed"}');
COMMIT;
SELECT count(*) AS games_after_commit, sum(ply_count) AS plies,
       (SELECT count(*) FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id
         WHERE g.selfplay->>'run' = 'committed') AS positions
  FROM pgmate.games WHERE selfplay->>'run' = 'committed';

-- statement_timeout stops a long run between moves; each game finished before it is
-- committed whole (how many there are depends on the machine, so only facts are shown)
SET client_min_messages = warning;
SET statement_timeout = '1s';
CALL pgmate.selfplay(1000000, 16, NULL, 4, '{"seed": 5, "max_plies": 40, "run": "timeout"}');
RESET statement_timeout;
RESET client_min_messages;
SELECT count(*) > 0 AS some_games_stored,
       count(*) < 1000000 AS stopped_early,
       bool_and(ply_count = (SELECT count(*) FROM pgmate.selfplay_positions p WHERE p.game_id = g.id))
         AS all_stored_games_complete,
       bool_and(result <> '*' AND termination IS NOT NULL) AS all_stored_games_finished
  FROM pgmate.games g WHERE selfplay->>'run' = 'timeout';
SELECT count(*) AS positions_without_game
  FROM pgmate.selfplay_positions p WHERE NOT EXISTS (SELECT FROM pgmate.games g WHERE g.id = p.game_id);
DELETE FROM pgmate.games WHERE source = 'selfplay';
\set VERBOSITY default
