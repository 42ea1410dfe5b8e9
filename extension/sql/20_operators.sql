
-- ===================================================================== operators and operator classes

-- board: equality, a total order (btree) and hashing
CREATE FUNCTION board_eq(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_ne(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_lt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_le(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_gt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_ge(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_cmp(board, board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_hash(board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS board_btree_ops DEFAULT FOR TYPE board USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 board_cmp(board, board);
CREATE OPERATOR CLASS board_hash_ops DEFAULT FOR TYPE board USING hash AS
  OPERATOR 1 =, FUNCTION 1 board_hash(board);

-- move: equality, a total order (btree) and hashing
CREATE FUNCTION move_eq(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_ne(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_lt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_le(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_gt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_ge(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_cmp(move, move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_hash(move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS move_btree_ops DEFAULT FOR TYPE move USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 move_cmp(move, move);
CREATE OPERATOR CLASS move_hash_ops DEFAULT FOR TYPE move USING hash AS
  OPERATOR 1 =, FUNCTION 1 move_hash(move);

-- move[]: overlap and containment by the moves' bits (PostgreSQL's anyarray operators call
-- move_eq for every pair of elements: several times slower on a scan of every game), e.g.
--   SELECT id FROM pgmate.games WHERE moves && '{e7e8n,d2d1n}'::move[];
-- The GIN operator class makes them indexable: CREATE INDEX ON pgmate.games USING gin (moves).
CREATE FUNCTION move_array_overlap(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_overlap' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_array_contains(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_array_contained(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_contained' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR && (LEFTARG = move[], RIGHTARG = move[], PROCEDURE = move_array_overlap, COMMUTATOR = &&,
                    RESTRICT = areasel, JOIN = areajoinsel);
CREATE OPERATOR @> (LEFTARG = move[], RIGHTARG = move[], PROCEDURE = move_array_contains, COMMUTATOR = <@,
                    RESTRICT = contsel, JOIN = contjoinsel);
CREATE OPERATOR <@ (LEFTARG = move[], RIGHTARG = move[], PROCEDURE = move_array_contained, COMMUTATOR = @>,
                    RESTRICT = contsel, JOIN = contjoinsel);
CREATE OPERATOR CLASS move_array_gin_ops DEFAULT FOR TYPE move[] USING gin AS
  OPERATOR 1 && (move[], move[]), OPERATOR 2 @> (move[], move[]), OPERATOR 3 <@ (move[], move[]),
  FUNCTION 1 move_cmp(move, move),
  FUNCTION 2 pg_catalog.ginarrayextract(anyarray, internal, internal),
  FUNCTION 3 pg_catalog.ginqueryarrayextract(anyarray, internal, int2, internal, internal, internal, internal),
  FUNCTION 4 pg_catalog.ginarrayconsistent(internal, int2, anyarray, int4, internal, internal, internal, internal),
  FUNCTION 6 pg_catalog.ginarraytriconsistent(internal, int2, anyarray, int4, internal, internal, internal),
  STORAGE move;
