
-- ===================================================================== the worker
-- pgmate-worker batches move generation and network evaluation for every session. With
-- shared_preload_libraries = 'pgmate' a background worker starts and supervises it;
-- settings: pgmate.worker_socket, pgmate.worker_command, pgmate.worker_device,
-- pgmate.worker_timeout, pgmate.worker_autostart.

CREATE FUNCTION perft(board, depth int, device text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft_on_worker' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION perft(board, int, text) IS
  'perft on a device: ''cpu'' in this backend, ''gpu'' or ''worker'' on pgmate-worker';
CREATE FUNCTION legal_moves_batch(boards board[], OUT idx int, OUT moves move[]) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_legal_moves_batch' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION evaluate(boards board[], network bigint DEFAULT NULL, history board[][] DEFAULT NULL,
    OUT idx int, OUT win real, OUT draw real, OUT loss real, OUT moves move[], OUT priors real[])
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_evaluate' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION evaluate(board[], bigint, board[][]) IS
  'network evaluation on pgmate-worker: win/draw/loss for the side to move and priors over the legal moves; history is a 2-D array, one row of earlier positions (newest first) per board';
CREATE FUNCTION worker_status() RETURNS jsonb
  AS 'MODULE_PATHNAME', 'worker_status' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION worker_pid() RETURNS int
  AS 'MODULE_PATHNAME', 'supervisor_worker_pid' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worker_pid() IS 'pid of the supervised pgmate-worker, NULL when none runs';
