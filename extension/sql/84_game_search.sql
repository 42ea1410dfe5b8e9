-- ============================================================ material and pattern search
-- Games by what their positions hold. Each game is replayed (a few microseconds) and every
-- position tested; the functions are parallel safe, so a scan of pgmate.games uses every
-- core. The games table keeps summaries that rule out most games without a replay: the
-- final material (material_signature) and the squares the men stood on (square_signature):
--   SELECT id FROM pgmate.games g WHERE pgmate.game_reaches_material(g, 'KRPvKR');
--   SELECT id FROM pgmate.games g WHERE pgmate.game_reaches_pattern(g, '???????K/8/8/8/8/8/8/8');
CREATE FUNCTION material(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION material(board) IS
  'the men on the board, White''s then Black''s: K, then Q R B N P letters, e.g. KRPvKR';
CREATE FUNCTION matches_pattern(board, pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'matches_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION matches_pattern(board, text) IS
  'sub-FEN pattern: 8 ranks from the 8th; a piece letter must stand there, ''.'' must be empty, ''?'' or a digit n (n squares) is anything';
CREATE FUNCTION reaches_material(start board, moves move[], material text) RETURNS bool
  AS 'MODULE_PATHNAME', 'reaches_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION reaches_material(board, move[], text) IS
  'whether some position of the game has exactly this material (e.g. KRPvKR)';
CREATE FUNCTION reaches_pattern(start board, moves move[], pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'reaches_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION reaches_pattern(board, move[], text) IS
  'whether some position of the game matches the sub-FEN pattern (see matches_pattern)';
CREATE FUNCTION may_reach_material(signature bigint, material text) RETURNS bool
  AS 'MODULE_PATHNAME', 'may_reach_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION may_reach_material(bigint, text) IS
  'false when a game''s material_signature rules the material out (captures never give men back)';
-- Inlined into the query: the signature first, the replay only for the games it leaves.
CREATE FUNCTION pgmate.game_reaches_material(game pgmate.games, material text) RETURNS bool
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT @extschema@.may_reach_material(game.material_signature, material)
           AND @extschema@.reaches_material(game.start, game.moves, material) $$;
COMMENT ON FUNCTION pgmate.game_reaches_material(pgmate.games, text) IS
  'whether some position of the stored game has exactly this material (e.g. KRPvKR), ruling most games out by their signature';
CREATE FUNCTION may_match_pattern(signature bytea, pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'may_match_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION may_match_pattern(bytea, text) IS
  'false when a game''s square_signature rules the pattern out (its men never stood where the pattern needs them)';
CREATE FUNCTION pgmate.game_reaches_pattern(game pgmate.games, pattern text) RETURNS bool
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT @extschema@.may_match_pattern(game.square_signature, pattern)
           AND @extschema@.reaches_pattern(game.start, game.moves, pattern) $$;
COMMENT ON FUNCTION pgmate.game_reaches_pattern(pgmate.games, text) IS
  'whether some position of the stored game matches the sub-FEN pattern, ruling most games out by their square_signature';
