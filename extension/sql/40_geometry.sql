
-- ===================================================================== geometry and pictures

CREATE FUNCTION move_table(piece text DEFAULT NULL,
    OUT piece text, OUT from_square text, OUT to_square text, OUT squares_crossed int)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'geometry_move_table' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4000;
COMMENT ON FUNCTION move_table(text) IS
  'every move of a piece on an empty board (king, queen, rook, bishop, knight, white_pawn, black_pawn, castling; NULL = all); squares_crossed counts the squares strictly between';
CREATE FUNCTION move_mask(piece text, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_move_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION move_mask(text, text) IS
  '8x8 matrix (row 1 = rank 8, column 1 = file a): 1 where the piece on that square of an empty board can go';
CREATE FUNCTION attack_mask(board, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_attack_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION attack_mask(board, text) IS
  '8x8 matrix: 1 on each square the piece on that square attacks in the position (blockers included)';

CREATE FUNCTION board_diagram(board) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_diagram' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_svg(board, last_move move DEFAULT NULL) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_svg' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION board_svg(board, move) IS 'a self-contained SVG picture of the board, the last move highlighted';
