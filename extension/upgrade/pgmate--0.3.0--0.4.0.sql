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
    RAISE NOTICE 'pgmate: networks % hold LibTorch archives (pgmate 0.3 weights), which are never loaded any more; see their notes', marked;
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
