-- pgmate 0.2.0 -> 0.3.0: American checkers (types checkers_board and checkers_move, their
-- operators, legal moves, perft, play, status and pictures).
-- The same statements as extension/sql/60_checkers.sql of 0.3.0.

\echo Use "ALTER EXTENSION pgmate UPDATE" to load this file. \quit

-- ===================================================================== American checkers
-- (new in 0.3.0; extension/upgrade/pgmate--0.2.0--0.3.0.sql holds the same statements)

-- The checkers functions carry the chess functions' names, overloaded on checkers_board.
-- For an untyped literal such as perft('startpos', 5) PostgreSQL would then find two
-- candidates of the same (user-defined) type category and call it ambiguous: board
-- becomes the preferred type of its category, so untyped literals keep meaning chess
-- positions and a checkers position is written with its type ('startpos'::checkers_board)
-- or comes from a checkers_board column. (CREATE TYPE cannot change an existing type, and
-- ALTER TYPE cannot set this flag.)
UPDATE pg_catalog.pg_type SET typispreferred = true WHERE oid = 'board'::regtype;

-- checkers_board: a position in 16 bytes (White's, Black's and the kings' squares as
-- 32-bit masks, the side to move). Text form: PDN FEN, B:W21,22,...:B1,2,...
-- ('startpos' accepted on input).
CREATE TYPE checkers_board;
CREATE FUNCTION checkers_board_in(cstring) RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_board_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_board_out(checkers_board) RETURNS cstring
  AS 'MODULE_PATHNAME', 'checkers_board_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_board_recv(internal) RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_board_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_board_send(checkers_board) RETURNS bytea
  AS 'MODULE_PATHNAME', 'checkers_board_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE checkers_board (
  INTERNALLENGTH = 16,
  INPUT = checkers_board_in,
  OUTPUT = checkers_board_out,
  RECEIVE = checkers_board_recv,
  SEND = checkers_board_send,
  ALIGNMENT = int4,
  STORAGE = plain
);
COMMENT ON TYPE checkers_board IS 'American checkers position; text form is PDN FEN (B:W21,...:B1,...)';

-- checkers_move: 16 bytes, board-free. Text form: numeric notation, 11-15 (a move),
-- 15x24 (a jump), 15x24x31 (a multiple jump, every landing square).
CREATE TYPE checkers_move;
CREATE FUNCTION checkers_move_in(cstring) RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_move_out(checkers_move) RETURNS cstring
  AS 'MODULE_PATHNAME', 'checkers_move_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_move_recv(internal) RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION checkers_move_send(checkers_move) RETURNS bytea
  AS 'MODULE_PATHNAME', 'checkers_move_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE checkers_move (
  INTERNALLENGTH = 16,
  INPUT = checkers_move_in,
  OUTPUT = checkers_move_out,
  RECEIVE = checkers_move_recv,
  SEND = checkers_move_send,
  ALIGNMENT = int4,
  STORAGE = plain
);
COMMENT ON TYPE checkers_move IS 'American checkers move in numeric notation (11-15, 15x24x31); board-free';

-- checkers_board: equality, a total order (btree) and hashing
CREATE FUNCTION checkers_board_eq(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_ne(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_lt(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_le(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_gt(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_ge(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_cmp(checkers_board, checkers_board) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_board_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_board_hash(checkers_board) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_board_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = checkers_board, RIGHTARG = checkers_board, PROCEDURE = checkers_board_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS checkers_board_btree_ops DEFAULT FOR TYPE checkers_board USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 checkers_board_cmp(checkers_board, checkers_board);
CREATE OPERATOR CLASS checkers_board_hash_ops DEFAULT FOR TYPE checkers_board USING hash AS
  OPERATOR 1 =, FUNCTION 1 checkers_board_hash(checkers_board);

-- checkers_move: equality, the order of notation (start square, then landing squares)
-- and hashing
CREATE FUNCTION checkers_move_eq(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_ne(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_lt(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_le(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_gt(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_ge(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_cmp(checkers_move, checkers_move) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_move_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION checkers_move_hash(checkers_move) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_move_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = checkers_move, RIGHTARG = checkers_move, PROCEDURE = checkers_move_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS checkers_move_btree_ops DEFAULT FOR TYPE checkers_move USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >,
  FUNCTION 1 checkers_move_cmp(checkers_move, checkers_move);
CREATE OPERATOR CLASS checkers_move_hash_ops DEFAULT FOR TYPE checkers_move USING hash AS
  OPERATOR 1 =, FUNCTION 1 checkers_move_hash(checkers_move);

-- Positions. rule: 'any' (the American rule: any capture sequence, each completed) or
-- 'longest' (only the sequences taking the most pieces).
CREATE FUNCTION side_to_move(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_side_to_move' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION status(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_status' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION status(checkers_board) IS 'ongoing, black_wins or white_wins (the side to move loses when it cannot move)';
CREATE FUNCTION play(checkers_board, checkers_move, rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(checkers_board, checkers_move[], rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(checkers_board, text, rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION play(checkers_board, text, text) IS 'plays a move in numeric notation (11-15, 15x24x31; a jump may give only its start and end when that names one sequence)';

-- Moves
CREATE FUNCTION move(checkers_board, text, rule text DEFAULT 'any') RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_parse' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION move(checkers_board, text, text) IS 'numeric notation, validated against the board';
CREATE FUNCTION legal_moves(checkers_board, rule text DEFAULT 'any',
    OUT move checkers_move, OUT notation text, OUT captures int, OUT crowns bool)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'checkers_legal_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;
CREATE FUNCTION legal_move_count(checkers_board, rule text DEFAULT 'any') RETURNS int
  AS 'MODULE_PATHNAME', 'checkers_legal_move_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION is_legal(checkers_board, checkers_move, rule text DEFAULT 'any') RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_is_legal' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
-- device: 'cpu' (this backend), 'gpu' or 'worker' (pgmate-worker); hence not IMMUTABLE.
CREATE FUNCTION perft(checkers_board, depth int, rule text DEFAULT 'any', device text DEFAULT 'cpu') RETURNS bigint
  AS 'MODULE_PATHNAME', 'checkers_perft' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION perft_divide(checkers_board, depth int, rule text DEFAULT 'any',
    OUT move checkers_move, OUT nodes bigint) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'checkers_perft_divide' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

-- Pictures
CREATE FUNCTION board_diagram(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_board_diagram' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_svg(checkers_board, last_move checkers_move DEFAULT NULL) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_board_svg' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION board_svg(checkers_board, checkers_move) IS 'a self-contained SVG picture of the board (PDN numbers on the dark squares), the last move highlighted';
