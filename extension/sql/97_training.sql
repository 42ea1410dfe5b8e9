
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

-- Engine evaluations as training targets: every position of a finished game that an engine
-- evaluated (pgmate.visible_evals: the rows of writers this session reads), with the engine's WDL as the value target and its move
-- as the policy target: best_move (select it AS played), or over MultiPV lines moves and
-- policy, a softmax of the lines' lichess win% at temperature 2 (a move 2 points of winning
-- chances worse than the best gets 1/e of its weight). game_move is the move the game went on
-- with. Filter on engine and limits: a position analysed by two engines has a row for each.
CREATE VIEW pgmate.eval_targets AS
  SELECT t.game_id, t.ply, t.source, t.board, t.history, t.repetitions, t.played AS game_move,
         e.best_move, l.moves, l.policy,
         ARRAY[e.win / 1000.0, e.draw / 1000.0, e.loss / 1000.0]::real[] AS wdl,
         ((e.win - e.loss) / 1000.0)::real AS z,
         e.engine, e.limits, e.score_cp, e.mate
  FROM pgmate.game_targets t
  JOIN pgmate.visible_evals e
    ON e.key = @extschema@.board_key(t.board) AND e.position = @extschema@.without_clocks(t.board)
  CROSS JOIN LATERAL (
    SELECT array_agg(y.move ORDER BY y.n) AS moves,
           array_agg(exp((y.win - y.best) / 2)::real ORDER BY y.n) AS policy
    FROM (SELECT x.move, x.n, x.win, max(x.win) OVER () AS best
          FROM (SELECT (line->>'move')::@extschema@.move AS move, n,
                       pgmate.win_percent(pgmate.eval_cp((line->>'cp')::int, (line->>'mate')::int)) AS win
                FROM jsonb_array_elements(coalesce(e.lines, jsonb_build_array(jsonb_build_object(
                       'move', e.best_move::text, 'cp', e.score_cp, 'mate', e.mate))))
                     WITH ORDINALITY AS j(line, n)) x) y) l
  WHERE e.best_move IS NOT NULL;
COMMENT ON VIEW pgmate.eval_targets IS
  'positions of finished games an engine evaluated: network input, the engine''s WDL (wdl, z), its move (best_move) and MultiPV policy (moves, policy), the game''s move, engine and limits';

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
