-- pgmate-worker under the server's supervision (shared_preload_libraries = 'pgmate'):
-- status, perft and legal moves through the worker, networks and evaluate(), and a
-- killed worker giving a clean error, then coming back.
SELECT pgmate.wait_for_worker();
SELECT worker_pid() > 0 AS supervised;
SELECT s->>'device' AS device, s ? 'queue_depth' AS has_queue_depth, s ? 'batches_run' AS has_batches,
       s ? 'mean_batch_size' AS has_mean_batch, s ? 'positions_per_s' AS has_rate
  FROM worker_status() s;

-- the worker's perft and legal moves agree with the backend's
SELECT name, perft(fen::board, depth, device => 'worker') = perft(fen::board, depth) AS same
FROM (VALUES
  ('start',     'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 4),
  ('kiwipete',  'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', 3),
  ('position3', '8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1', 4),
  ('position4', 'r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1', 3),
  ('position5', 'rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8', 3),
  ('position6', 'r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10', 3)
) AS t(name, fen, depth);
SELECT perft('startpos', 3, device => 'cpu');
SELECT perft('startpos', 3, device => 'tpu');
WITH boards AS (SELECT ARRAY(SELECT play('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', move)
                             FROM legal_moves('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1')) AS b)
SELECT count(*) AS boards,
       bool_and(lm.moves = ARRAY(SELECT move FROM legal_moves(boards.b[lm.idx]))) AS same_moves
  FROM boards, LATERAL legal_moves_batch(boards.b) lm;

-- a small network, stored as a row, evaluated by the worker
SELECT pgmate.init_network('tiny', '{"filters": 8, "blocks": 1, "attention_blocks": 0}', seed => 7) AS id \gset
SELECT name, config, length(weights) > 0 AS has_weights FROM pgmate.networks WHERE id = :id;
-- a row keeps the whole configuration its weights were made for, a preset spelled out
SELECT config = pgmate.weights_config(weights) AS as_its_weights FROM pgmate.networks WHERE id = :id;
SELECT pgmate.weights_config(pgmate.network_init_weights('{"preset": "tiny"}', 1)) AS tiny;
-- bytes that are not weights: too short, a header longer than the bytes, no JSON, no pgmate_config
SELECT pgmate.weights_config('\x00') AS short, pgmate.weights_config('\xff000000000000007b7d') AS overlong,
       pgmate.weights_config('\x0300000000000000616263') AS not_json,
       pgmate.weights_config('\x02000000000000007b7d') AS no_config;
CREATE TEMP TABLE eval1 AS
  SELECT * FROM evaluate(ARRAY['startpos'::board, play('startpos', 'e2e4'), '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1'], :id);
SELECT idx, abs(win + draw + loss - 1) < 1e-5 AS wdl_sums_to_1,
       cardinality(moves) AS moves, cardinality(priors) AS priors,
       coalesce(abs((SELECT sum(p) FROM unnest(priors) p) - 1) < 1e-4, true) AS priors_sum_to_1
  FROM eval1 ORDER BY idx;
SELECT bool_and(e.moves = ARRAY(SELECT move FROM legal_moves(b))) AS legal_moves_only
  FROM eval1 e JOIN (SELECT row_number() OVER () AS idx, b
                     FROM unnest(ARRAY['startpos'::board, play('startpos', 'e2e4'), '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1']) b) x
    USING (idx);
-- the same inputs give the same outputs; history changes them
SELECT (SELECT array_agg(win ORDER BY idx) FROM eval1) =
       (SELECT array_agg(win ORDER BY idx)
          FROM evaluate(ARRAY['startpos'::board, play('startpos', 'e2e4'), '7k/5Q2/6K1/8/8/8/8/8 b - - 0 1'], :id))
       AS deterministic;
SELECT count(*) AS rows FROM evaluate(ARRAY[play('startpos', 'e2e4')], :id, history => ARRAY[['startpos'::board]]);
SELECT * FROM evaluate(ARRAY['startpos'::board], :id, history => ARRAY[['startpos'::board], ['startpos'::board]]);
SELECT * FROM evaluate(ARRAY['startpos'::board], 999);
-- the repetition count is an input of the network (plane 56), as in self-play
SELECT (SELECT win FROM evaluate(ARRAY['startpos'::board], :id)) <>
       (SELECT win FROM evaluate(ARRAY['startpos'::board], :id, repetitions => ARRAY[2])) AS repetitions_are_an_input;
SELECT * FROM evaluate(ARRAY['startpos'::board], :id, repetitions => ARRAY[1, 2]);
SELECT * FROM evaluate(ARRAY['startpos'::board], :id, repetitions => ARRAY[-1]);
SELECT n->'config'->>'filters' AS held_filters, n->>'sha256' = encode(weights_sha256, 'hex') AS same_weights
  FROM worker_status() s, jsonb_array_elements(s->'networks') n, pgmate.networks w
  WHERE (n->>'id')::bigint = :id AND w.id = :id;

-- self-play through the worker: the stored priors are the network's
SET client_min_messages = warning;
CALL pgmate.selfplay(2, 8, :id, 2, '{"seed": 3, "max_plies": 6, "run": "worker-test"}');
RESET client_min_messages;
SELECT count(*) AS games, bool_and(network_id = :id) AS network_recorded, bool_and(ply_count = 6) AS six_plies,
       bool_and(white = 'pgmate network ' || :id) AS player_named
  FROM pgmate.games WHERE selfplay->>'run' = 'worker-test';
SELECT count(*) AS positions, bool_and(abs(a - b) < 1e-4) AS start_priors_from_network
  FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id,
       LATERAL unnest(p.priors, (SELECT priors FROM evaluate(ARRAY['startpos'::board], :id))) AS u(a, b)
  WHERE g.selfplay->>'run' = 'worker-test' AND p.ply = 0;
DELETE FROM pgmate.games WHERE selfplay->>'run' = 'worker-test';

-- the worker dies: a clean error (connection failure), then the supervisor restarts it
SELECT pgmate.kill_worker();
\set VERBOSITY sqlstate
SELECT * FROM evaluate(ARRAY['startpos'::board], :id);
\set VERBOSITY default
SELECT pgmate.wait_for_worker();
SELECT count(*) AS rows_after_restart FROM evaluate(ARRAY['startpos'::board], :id);
-- the backend's own move generation never needs the worker
SELECT perft('startpos', 3);

-- the supervised worker's precision on a GPU (the CPU runs fp32 whatever it says)
SHOW pgmate.worker_precision;
SELECT setting, enumvals FROM pg_settings WHERE name = 'pgmate.worker_precision';
-- where it makes the input planes, and what the running worker says it does (the CPU: host)
SELECT setting, enumvals FROM pg_settings WHERE name = 'pgmate.worker_encode';
SELECT worker_status()->>'input_encoding' AS input_encoding;
