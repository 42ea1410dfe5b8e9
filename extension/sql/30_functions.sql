
-- ===================================================================== functions

-- Positions
CREATE FUNCTION board_key(board) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_key' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION board_key(board) IS 'Polyglot Zobrist key of the position (clocks ignored)';
CREATE FUNCTION side_to_move(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_side_to_move' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION in_check(board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_in_check' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION status(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_status' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION status(board) IS 'ongoing, checkmate, stalemate, fifty_moves or insufficient_material';
CREATE FUNCTION piece_at(board, square text) RETURNS text
  AS 'MODULE_PATHNAME', 'board_piece_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pieces(board, OUT square text, OUT piece text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_pieces' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 32;
CREATE FUNCTION play(board, move) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(board, move[]) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(board, text) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION play(board, text) IS 'plays a move given as SAN or UCI text';

-- Moves
CREATE FUNCTION from_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_from_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION to_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_to_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION promotion(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_promotion' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION san(board, move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_san' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move(board, text) RETURNS move
  AS 'MODULE_PATHNAME', 'move_parse' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION move(board, text) IS 'SAN or UCI text, validated against the board';

-- Move generation
CREATE FUNCTION legal_moves(board,
    OUT move move, OUT uci text, OUT san text, OUT piece text, OUT from_square text,
    OUT to_square text, OUT captured text, OUT promotion text, OUT is_check bool, OUT is_mate bool)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_legal_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;
CREATE FUNCTION legal_move_count(board) RETURNS int
  AS 'MODULE_PATHNAME', 'board_legal_move_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION is_legal(board, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_is_legal' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION perft(board, depth int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION perft_divide(board, depth int, OUT move move, OUT nodes bigint) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_perft_divide' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;
