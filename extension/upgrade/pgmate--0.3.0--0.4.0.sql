-- pgmate 0.3.0 -> 0.4.0: networks as data and by exact identity; the shared worker guarded.
--  * pgmate.networks gains weights_sha256 (generated): pgmate-worker knows a network by
--    (database, id, this hash), so an updated row is loaded anew.
--  * Weights are safetensors. Rows in pgmate 0.3's format (LibTorch archives, which run
--    code when loaded) are never loaded again: they are marked in notes and listed.
--  * evaluate() takes a network (no default), repetition counts, and says which network
--    answered; the functions that make the shared worker allocate or compute on a large
--    scale are no longer executable by PUBLIC.
-- The same statements as extension/sql/50_worker.sql, 85_selfplay.sql and 90_networks.sql
-- of 0.4.0.

\echo Use "ALTER EXTENSION pgmate UPDATE" to load this file. \quit

ALTER TABLE pgmate.networks ADD COLUMN weights_sha256 bytea GENERATED ALWAYS AS (sha256(weights)) STORED;
COMMENT ON TABLE pgmate.networks IS 'policy + WDL networks; weights in safetensors format (data only, never code) with pgmate''s configuration and checksum in its metadata';

DO $$
DECLARE
  marked text;
BEGIN
  WITH old AS (
    UPDATE pgmate.networks
       SET notes = concat_ws(E'\n', notes,
             'pgmate 0.4.0: these weights are a LibTorch archive (pgmate 0.3), which pgmate-worker never loads '
             'because loading one can run code; re-create the network or convert it with a trusted tool')
     WHERE substring(weights FROM 1 FOR 4) = '\x504b0304'::bytea
    RETURNING id)
  SELECT string_agg(id::text, ', ' ORDER BY id) INTO marked FROM old;
  IF marked IS NOT NULL THEN
    RAISE WARNING 'pgmate: networks % hold LibTorch archives (pgmate 0.3 weights), which are never loaded any more; see their notes', marked;
  END IF;
END
$$;

REVOKE ALL ON FUNCTION pgmate.network_init_weights(text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pgmate.load_network(bigint) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.load_network(bigint) IS 'hands pgmate-worker this network now (it holds several, least recently used out first)';
REVOKE ALL ON FUNCTION pgmate.init_network(text, jsonb, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION legal_moves_batch(board[]) FROM PUBLIC;
REVOKE ALL ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) FROM PUBLIC;

DROP FUNCTION evaluate(board[], bigint, board[][]);
CREATE FUNCTION evaluate(boards board[], network bigint, history board[][] DEFAULT NULL,
    repetitions int[] DEFAULT NULL,
    OUT idx int, OUT win real, OUT draw real, OUT loss real, OUT moves move[], OUT priors real[],
    OUT network_id bigint, OUT weights_sha256 bytea)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_evaluate' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION evaluate(board[], bigint, board[][], int[]) FROM PUBLIC;
COMMENT ON FUNCTION evaluate(board[], bigint, board[][], int[]) IS
  'network evaluation on pgmate-worker: win/draw/loss for the side to move and priors over the legal moves, by the network row''s current weights (network_id, weights_sha256 say which); history is a 2-D array, one row of earlier positions (newest first) per board; repetitions how often each board occurred before in its game';

-- Self-play data fit for training: each position keeps its policy target and repetition
-- count, and training_targets gives everything the network's input and heads need
-- (history, repetitions, wdl in head order).
ALTER TABLE pgmate.selfplay_positions
  ADD COLUMN policy real[],
  ADD COLUMN repetitions int NOT NULL DEFAULT 0,
  DROP CONSTRAINT selfplay_positions_lengths,
  ADD CONSTRAINT selfplay_positions_lengths
    CHECK (cardinality(visits) = cardinality(moves) AND cardinality(priors) = cardinality(moves)
           AND (policy IS NULL OR cardinality(policy) = cardinality(moves)));
COMMENT ON TABLE pgmate.selfplay_positions IS
  'one row per searched position of a self-play game: visit counts, priors, policy target, root value, repetitions, move played';
-- Rows stored before 0.4.0 had no repetition count: count earlier occurrences of the same
-- position (its Zobrist key) in the game.
UPDATE pgmate.selfplay_positions p SET repetitions = r.n
  FROM (SELECT game_id, ply, count(*) OVER (PARTITION BY game_id, board_key(board) ORDER BY ply) - 1 AS n
        FROM pgmate.selfplay_positions) r
  WHERE r.game_id = p.game_id AND r.ply = p.ply AND r.n > 0;

DROP VIEW pgmate.training_targets;
CREATE VIEW pgmate.training_targets AS
  SELECT p.game_id, g.network_id, p.ply, p.board,
         ARRAY(SELECT h.board FROM pgmate.selfplay_positions h
               WHERE h.game_id = p.game_id AND h.ply BETWEEN p.ply - 3 AND p.ply - 1
               ORDER BY h.ply DESC) AS history,
         p.repetitions, p.moves,
         coalesce(p.policy, pgmate.visit_policy(p.visits)) AS policy,
         t.wdl, (t.wdl[1] - t.wdl[3])::int AS z,
         p.value AS q
  FROM pgmate.selfplay_positions p
  JOIN pgmate.games g ON g.id = p.game_id,
  LATERAL (SELECT CASE WHEN g.result = '1/2-1/2' THEN '{0,1,0}'
                       WHEN (g.result = '1-0') = (side_to_move(p.board) = 'white') THEN '{1,0,0}'
                       ELSE '{0,0,1}' END::real[] AS wdl) t
  WHERE g.result IN ('1-0', '0-1', '1/2-1/2');
COMMENT ON VIEW pgmate.training_targets IS
  'one row per self-play position: the network input (board, history, repetitions), policy target, value target wdl in head order (win, draw, loss for the side to move) and as z, root value q';
