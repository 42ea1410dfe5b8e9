
-- ===================================================================== training data
-- Every position of every finished game of pgmate.games as a training row: the network's
-- input (board, up to 3 earlier positions newest first, repetitions), the move played (a
-- one-hot policy target) and the result from the side to move, as wdl (head order) and z;
-- with the game's source, ratings and ECO code to filter on. Filters on the game's columns
-- apply before its positions are computed. Split held-out data by game, never by position:
-- e.g. WHERE hashint8(game_id) % 10 = 0.
CREATE VIEW pgmate.game_targets AS
  SELECT g.id AS game_id, p.ply, g.source, p.board, p.history, least(p.repetitions, 2)::int AS repetitions,
         p.move AS played, t.wdl, (t.wdl[1] - t.wdl[3])::int AS z,
         CASE WHEN g.tags->>'WhiteElo' ~ '^[0-9]{1,4}$' THEN (g.tags->>'WhiteElo')::int END AS white_elo,
         CASE WHEN g.tags->>'BlackElo' ~ '^[0-9]{1,4}$' THEN (g.tags->>'BlackElo')::int END AS black_elo,
         g.tags->>'ECO' AS eco
  FROM pgmate.games g
  CROSS JOIN LATERAL (
    SELECT gp.ply, gp.board, gp.move,
           array_remove(ARRAY[lag(gp.board, 1) OVER w, lag(gp.board, 2) OVER w, lag(gp.board, 3) OVER w], NULL)
             AS history,
           count(*) OVER (PARTITION BY @extschema@.board_key(gp.board) ORDER BY gp.ply
                          ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS repetitions
    FROM @extschema@.game_positions(g.start, g.moves) gp
    WINDOW w AS (ORDER BY gp.ply)
  ) p,
  LATERAL (SELECT CASE WHEN g.result = '1/2-1/2' THEN '{0,1,0}'
                       WHEN (g.result = '1-0') = (@extschema@.side_to_move(p.board) = 'white') THEN '{1,0,0}'
                       ELSE '{0,0,1}' END::real[] AS wdl) t
  WHERE g.result IN ('1-0', '0-1', '1/2-1/2') AND p.move IS NOT NULL;
COMMENT ON VIEW pgmate.game_targets IS
  'one row per position of a finished game: the network input (board, history, repetitions), the move played, the result as wdl (side to move) and z, source, ratings and ECO to filter on';

-- A network measured on the rows of a training query (columns by name: board, history,
-- repetitions, played or moves + policy, z or wdl, weight; a missing or mistyped column is
-- 42804 naming it): the weighted share of rows whose most likely move is the target's, and
-- the mean policy and win/draw/loss cross-entropies, computed on the worker.
CREATE FUNCTION pgmate.network_accuracy(network bigint, data text, OUT positions bigint, OUT top1 float8,
                                        OUT policy_cross_entropy float8, OUT wdl_cross_entropy float8)
  AS 'MODULE_PATHNAME', 'network_accuracy' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION pgmate.network_accuracy(bigint, text) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.network_accuracy(bigint, text) IS
  'top-1 move accuracy and policy and WDL cross-entropies of a network on the rows of a training query';
