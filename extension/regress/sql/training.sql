-- Training data from stored games: pgmate.game_targets.
-- (Only this suite's games: the suites before leave theirs in the shared database.)
DELETE FROM pgmate.games;
SELECT pgmate.import_pgn($$
[Event "repetition"]
[WhiteElo "2400"]
[BlackElo "x"]
[ECO "C20"]
[Result "1-0"]

1. e4 e5 2. Nf3 Nc6 3. Ng1 Nb8 4. Nf3 Nc6 5. Ng1 Nb8 1-0

[Event "unfinished"]
[Result "*"]

1. d4 *
$$) AS imported;
-- one row per position with a move (the final position has none); the unfinished game has none
SELECT ply, played, z, wdl, repetitions, cardinality(history) AS history, white_elo, black_elo, eco, source
  FROM pgmate.game_targets ORDER BY game_id, ply;
-- history is the earlier positions, newest first
SELECT ply, newest_first, third FROM (
  SELECT ply, history[1] = lag(board) OVER (ORDER BY ply) AS newest_first,
         history[3] = lag(board, 3) OVER (ORDER BY ply) AS third
    FROM pgmate.game_targets) t
  WHERE ply BETWEEN 3 AND 4 ORDER BY ply;
-- a filter on the game applies before its positions are computed
EXPLAIN (COSTS OFF) SELECT count(*) FROM pgmate.game_targets WHERE source = 'arena';

-- a network measured on the rows of a query, on the worker
SELECT pgmate.wait_for_worker();
SELECT pgmate.init_network('accuracy', '{"filters": 8, "blocks": 1, "attention_blocks": 0}', seed => 5) AS net \gset
SELECT positions, top1 BETWEEN 0 AND 1 AS top1_ok, policy_cross_entropy > 0 AS policy_ce_ok,
       wdl_cross_entropy > 0 AS wdl_ce_ok
  FROM pgmate.network_accuracy(:net, 'SELECT board, history, repetitions, played, z FROM pgmate.game_targets');
-- the same rows as a distribution on one move each give the same figures; weight 0 rows count for nothing
-- (to float precision: c and d evaluate their positions in other batches, and the CPU's kernels,
-- chosen by the batch's shape, round the last bits differently)
SELECT a.top1 = b.top1 AND abs(a.policy_cross_entropy - b.policy_cross_entropy) < 1e-9 AS same_as_one_hot,
       c.positions AS weighted_rows, abs(c.policy_cross_entropy - d.policy_cross_entropy) < 1e-6 AS weight_zero_ignored
  FROM pgmate.network_accuracy(:net, 'SELECT board, played, z FROM pgmate.game_targets') a,
       pgmate.network_accuracy(:net, 'SELECT board, ARRAY[played] AS moves, ARRAY[1]::real[] AS policy, z FROM pgmate.game_targets') b,
       pgmate.network_accuracy(:net, 'SELECT board, played, z, CASE WHEN ply < 5 THEN 1 ELSE 0 END::real AS weight FROM pgmate.game_targets') c,
       pgmate.network_accuracy(:net, 'SELECT board, played, z FROM pgmate.game_targets WHERE ply < 5') d;
-- top-1 by hand: the network's most likely move against the move played
SELECT count(*) FILTER (WHERE e.moves[array_position(e.priors, (SELECT max(p) FROM unnest(e.priors) p))] = t.played)::float8
       / count(*) = (SELECT top1 FROM pgmate.network_accuracy(:net, 'SELECT board, history, repetitions, played FROM pgmate.game_targets'))
       AS top1_by_hand
  FROM pgmate.game_targets t,
       LATERAL evaluate(ARRAY[t.board], :net, ARRAY[array_cat(t.history, array_fill(NULL::board, ARRAY[3 - cardinality(t.history)]))],
                        ARRAY[t.repetitions]) e;
-- no rows: nothing to measure
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT board, played FROM pgmate.game_targets WHERE false');
-- what the training data must look like, named
\set VERBOSITY terse
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT played FROM pgmate.game_targets');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT board FROM pgmate.game_targets');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT board, played::text AS played FROM pgmate.game_targets');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT board, ARRAY[played] AS moves FROM pgmate.game_targets');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT board, ARRAY[played] AS moves, ARRAY[1, 2]::real[] AS policy FROM pgmate.game_targets');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT ''startpos''::board AS board, ''e2e5''::move AS played');
SELECT * FROM pgmate.network_accuracy(:net, 'DELETE FROM pgmate.games');
SELECT * FROM pgmate.network_accuracy(:net, 'SELECT nonsense FROM');
-- rows training refuses are refused here too, with its messages: values that overflow real
-- (its targets' type) or vanish in it, and a target move given twice
SELECT * FROM pgmate.network_accuracy(:net, $q$SELECT 'startpos'::board AS board, 'e2e4'::move AS played, ARRAY[1e300::float8, 0, 0] AS wdl$q$);
SELECT * FROM pgmate.network_accuracy(:net, $q$SELECT 'startpos'::board AS board, '{e2e4}'::move[] AS moves, ARRAY[1e-320::float8] AS policy$q$);
SELECT * FROM pgmate.network_accuracy(:net, $q$SELECT 'startpos'::board AS board, '{e2e4,d2d4}'::move[] AS moves, ARRAY[1e300::float8, 1] AS policy$q$);
SELECT * FROM pgmate.network_accuracy(:net, $q$SELECT 'startpos'::board AS board, '{e2e4,e2e4}'::move[] AS moves, '{0.5,0.5}'::real[] AS policy$q$);
\set VERBOSITY default
SELECT count(*) AS games_kept FROM pgmate.games;

DELETE FROM pgmate.games;
DELETE FROM pgmate.networks;
SELECT pgmate.kill_worker();
SELECT pgmate.wait_for_worker();
SELECT setval(pg_get_serial_sequence('pgmate.games', 'id'), 1, false) AS games_id,
       setval(pg_get_serial_sequence('pgmate.networks', 'id'), 1, false) AS networks_id;
