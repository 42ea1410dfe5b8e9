-- Training data from stored games: pgmate.game_targets.
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
DELETE FROM pgmate.games;
SELECT setval(pg_get_serial_sequence('pgmate.games', 'id'), 1, false) AS games_id;
