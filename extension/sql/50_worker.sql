
-- ===================================================================== the worker
-- pgmate-worker batches move generation and network evaluation for every session. With
-- shared_preload_libraries = 'pgmate' a background worker starts and supervises it;
-- settings: pgmate.worker_socket, pgmate.worker_command, pgmate.worker_device,
-- pgmate.worker_timeout, pgmate.worker_autostart, pgmate.worker_network_memory,
-- pgmate.worker_perft_max_depth, pgmate.worker_checkers_perft_max_depth.
-- The worker is shared by every session: the functions that make it allocate or compute
-- on a large scale are not executable by PUBLIC (docs/security.md says what to GRANT).

CREATE FUNCTION perft(board, depth int, device text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft_on_worker' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION perft(board, int, text) IS
  'perft on a device: ''cpu'' in this backend, ''gpu'' or ''worker'' on pgmate-worker';
CREATE FUNCTION legal_moves_batch(boards board[], OUT idx int, OUT moves move[]) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_legal_moves_batch' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION legal_moves_batch(board[]) FROM PUBLIC;
CREATE FUNCTION evaluate(boards board[], network bigint, history board[][] DEFAULT NULL,
    repetitions int[] DEFAULT NULL,
    OUT idx int, OUT win real, OUT draw real, OUT loss real, OUT moves move[], OUT priors real[],
    OUT network_id bigint, OUT weights_sha256 bytea)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_evaluate' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
REVOKE ALL ON FUNCTION evaluate(board[], bigint, board[][], int[]) FROM PUBLIC;
COMMENT ON FUNCTION evaluate(board[], bigint, board[][], int[]) IS
  'network evaluation on pgmate-worker: win/draw/loss for the side to move and priors over the legal moves, by the network row''s current weights (network_id, weights_sha256 say which); history is a 2-D array, one row of earlier positions (newest first) per board; repetitions how often each board occurred before in its game';
CREATE FUNCTION worker_status() RETURNS jsonb
  AS 'MODULE_PATHNAME', 'worker_status' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION worker_pid() RETURNS int
  AS 'MODULE_PATHNAME', 'supervisor_worker_pid' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worker_pid() IS 'pid of the supervised pgmate-worker, NULL when none runs';
