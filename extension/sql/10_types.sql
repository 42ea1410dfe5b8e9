
-- ===================================================================== types

-- board: a position in 32 bytes (occupancy, a nibble per piece, side, castling, en
-- passant, clocks). Text form: FEN ('startpos' accepted on input).
CREATE TYPE board;
CREATE FUNCTION board_in(cstring) RETURNS board
  AS 'MODULE_PATHNAME', 'board_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_out(board) RETURNS cstring
  AS 'MODULE_PATHNAME', 'board_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_recv(internal) RETURNS board
  AS 'MODULE_PATHNAME', 'board_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_send(board) RETURNS bytea
  AS 'MODULE_PATHNAME', 'board_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE board (
  INTERNALLENGTH = 32,
  INPUT = board_in,
  OUTPUT = board_out,
  RECEIVE = board_recv,
  SEND = board_send,
  ALIGNMENT = char,
  STORAGE = plain
);
COMMENT ON TYPE board IS 'chess position; text form is FEN';

-- move: 16 bits (from, to, promotion). Text form: UCI ('e2e4', 'e7e8q', 'e1g1').
CREATE TYPE move;
CREATE FUNCTION move_in(cstring) RETURNS move
  AS 'MODULE_PATHNAME', 'move_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_out(move) RETURNS cstring
  AS 'MODULE_PATHNAME', 'move_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_recv(internal) RETURNS move
  AS 'MODULE_PATHNAME', 'move_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_send(move) RETURNS bytea
  AS 'MODULE_PATHNAME', 'move_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE move (
  INTERNALLENGTH = 2,
  INPUT = move_in,
  OUTPUT = move_out,
  RECEIVE = move_recv,
  SEND = move_send,
  PASSEDBYVALUE,
  ALIGNMENT = int2,
  STORAGE = plain
);
COMMENT ON TYPE move IS 'chess move in UCI notation; castling and en passant are recognised from the board';
