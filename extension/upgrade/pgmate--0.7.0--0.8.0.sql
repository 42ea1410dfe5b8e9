-- pgmate 0.7.0 -> 0.8.0: the position index (pgmate.position_games, position_count, explorer),
-- kept by triggers on pgmate.games and built here for the games already stored. It
-- replaces the GIN index over game_keys(start, moves). And game_hash, to find copies of
-- a game; material and pattern search.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.8.0'" to load this file. \quit

-- ============================================================ game_hash, material_signature
CREATE FUNCTION game_hash(start board, moves move[]) RETURNS bigint
  AS 'MODULE_PATHNAME', 'game_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION game_hash(board, move[]) IS
  'a game''s identity for finding copies of it: a 64-bit hash of its start position and moves (not its tags)';
ALTER TABLE pgmate.games ADD COLUMN game_hash bigint GENERATED ALWAYS AS (game_hash(start, moves)) STORED;
CREATE INDEX games_game_hash_idx ON pgmate.games (game_hash);
CREATE FUNCTION material_signature(start board, moves move[]) RETURNS bigint
  AS 'MODULE_PATHNAME', 'material_signature' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION material_signature(board, move[]) IS
  'a game''s final material and whether a pawn promoted, packed (what material search prunes by); NULL for an illegal game';
ALTER TABLE pgmate.games ADD COLUMN material_signature bigint
  GENERATED ALWAYS AS (material_signature(start, moves)) STORED;

-- ============================================================ material and pattern search
-- Games by what their positions hold. Each game is replayed (a few microseconds) and every
-- position tested; the functions are parallel safe, so a scan of pgmate.games uses every
-- core. For material, the games table keeps a summary (material_signature) that rules out
-- most games without a replay:
--   SELECT id FROM pgmate.games g WHERE pgmate.game_reaches_material(g, 'KRPvKR');
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


-- ============================================================ the position index
-- Every distinct position of every game in pgmate.games as a 14-byte entry (position key,
-- game, the move played from it, the result), in sorted blocks of 140 (core/gamedb). A
-- statement's new games make one run of blocks; runs are merged as they accumulate, as an
-- LSM tree does. Kept by the trigger below: never written by hand.
CREATE TABLE pgmate.position_runs (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  level      int NOT NULL CHECK (level >= 0),      -- 0: one statement's games; n + 1: merged level-n runs
  entries    bigint NOT NULL CHECK (entries >= 0),
  blocks     int NOT NULL CHECK (blocks >= 0),
  created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE pgmate.position_runs IS 'runs of the position index (kept by pgmate.games'' trigger)';

-- first_key and last_key hold the keys with the sign bit flipped, so that SQL's signed
-- order is the blocks' unsigned order.
CREATE TABLE pgmate.position_blocks (
  run_id    bigint NOT NULL REFERENCES pgmate.position_runs (id) ON DELETE CASCADE,
  first_key bigint NOT NULL,
  seq       int NOT NULL,
  last_key  bigint NOT NULL,
  data      bytea NOT NULL,
  PRIMARY KEY (run_id, first_key, seq)
) WITH (fillfactor = 100);
COMMENT ON TABLE pgmate.position_blocks IS 'sorted blocks of the position index (kept by pgmate.games'' trigger)';
ALTER TABLE pgmate.position_blocks ALTER COLUMN data SET STORAGE MAIN;  -- inline; random bytes do not compress

CREATE FUNCTION pgmate.position_index_trigger() RETURNS trigger
  AS 'MODULE_PATHNAME', 'position_index_trigger' LANGUAGE C;
CREATE TRIGGER games_position_index_insert AFTER INSERT ON pgmate.games
  REFERENCING NEW TABLE AS new_games FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();
CREATE TRIGGER games_position_index_update AFTER UPDATE ON pgmate.games
  REFERENCING OLD TABLE AS old_games NEW TABLE AS new_games
  FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();
CREATE TRIGGER games_position_index_delete AFTER DELETE ON pgmate.games
  REFERENCING OLD TABLE AS old_games FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();
CREATE TRIGGER games_position_index_truncate AFTER TRUNCATE ON pgmate.games
  FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();

CREATE FUNCTION pgmate.position_index_merge(all_runs boolean DEFAULT true) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.position_index_merge(boolean) IS
  'all_runs: merges every run of the position index into one (fastest searches); false: only the levels that are full, as inserts do (after a bulk import with pgmate.position_index_deferred_merges); returns the entries of the index';
CREATE FUNCTION pgmate.position_index_rebuild() RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_rebuild' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.position_index_rebuild() IS
  'builds the position index again from pgmate.games; returns its entries';

-- Searching: the games that reached a position (transpositions included), how many, and
-- the moves played from it.
CREATE FUNCTION pgmate.position_games(board board, max_games bigint DEFAULT NULL) RETURNS SETOF bigint
  AS 'MODULE_PATHNAME', 'position_games' LANGUAGE C STABLE PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION pgmate.position_games(board, bigint) IS
  'ids of the games that reached the position, ascending (at most max_games of them)';
CREATE FUNCTION pgmate.position_count(board board) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_count' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.position_count(board) IS 'how many games reached the position';
CREATE FUNCTION pgmate.explorer(board board,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 20;
COMMENT ON FUNCTION pgmate.explorer(board) IS
  'the moves played from the position, most played first: games, results, White''s score';

CREATE FUNCTION pgmate.position_moves(board board, OUT game bigint, OUT move move, OUT result text)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'position_moves' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION pgmate.position_moves(board) IS
  'every game that reached the position, by id: the move played from it there (NULL where the game ended) and the result';

-- The explorer over the games that pass filters, with the players' average rating and the
-- last date played per move, as lichess's explorer shows them. It joins the index's
-- entries to pgmate.games: as fast as the position is rare.
CREATE FUNCTION pgmate.explorer(board board, filters jsonb,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8, OUT average_rating int, OUT last_played text)
  RETURNS SETOF record
  LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE ROWS 20
  AS $$
  DECLARE
    unknown text;
  BEGIN
    IF jsonb_typeof(filters) <> 'object' THEN
      RAISE EXCEPTION 'explorer filters must be a JSON object, not %', filters USING ERRCODE = '22023';
    END IF;
    SELECT string_agg(k, ', ') INTO unknown FROM jsonb_object_keys(filters) k
      WHERE k NOT IN ('min_rating', 'max_rating', 'since', 'until', 'player', 'white', 'black', 'source');
    IF unknown IS NOT NULL THEN
      RAISE EXCEPTION 'unknown explorer filter: % (known: min_rating, max_rating, since, until, player, white, black, source)',
        unknown USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
      WITH played AS (
        SELECT e.move, e.result, g.date,
               -- the players' average rating (one of them when the other is unknown)
               (SELECT avg(r)::int FROM unnest(ARRAY[
                  CASE WHEN g.tags->>'WhiteElo' ~ '^[0-9]{1,4}$' THEN (g.tags->>'WhiteElo')::int END,
                  CASE WHEN g.tags->>'BlackElo' ~ '^[0-9]{1,4}$' THEN (g.tags->>'BlackElo')::int END]) r) AS rating,
               g.white, g.black, g.source
        FROM pgmate.position_moves(explorer.board) e
        JOIN pgmate.games g ON g.id = e.game
        WHERE e.move IS NOT NULL),
      kept AS (
        SELECT * FROM played p
        WHERE (filters->'min_rating' IS NULL OR p.rating >= (filters->>'min_rating')::int)
          AND (filters->'max_rating' IS NULL OR p.rating <= (filters->>'max_rating')::int)
          AND (filters->'since' IS NULL OR p.date >= filters->>'since')
          AND (filters->'until' IS NULL OR p.date <= filters->>'until' OR p.date LIKE (filters->>'until') || '%')
          AND (filters->'player' IS NULL OR filters->>'player' IN (p.white, p.black))
          AND (filters->'white' IS NULL OR p.white = filters->>'white')
          AND (filters->'black' IS NULL OR p.black = filters->>'black')
          AND (filters->'source' IS NULL OR p.source = filters->>'source'))
      SELECT k.move, @extschema@.san(explorer.board, k.move), count(*),
             count(*) FILTER (WHERE k.result = '1-0'), count(*) FILTER (WHERE k.result = '1/2-1/2'),
             count(*) FILTER (WHERE k.result = '0-1'),
             (count(*) FILTER (WHERE k.result = '1-0') + 0.5 * count(*) FILTER (WHERE k.result = '1/2-1/2'))::float8 /
               nullif(count(*) FILTER (WHERE k.result <> '*'), 0),
             avg(k.rating)::int, max(k.date) FILTER (WHERE k.date !~ '^[?]')
      FROM kept k
      GROUP BY k.move
      ORDER BY 3 DESC, 2;
  END
  $$;
COMMENT ON FUNCTION pgmate.explorer(board, jsonb) IS
  'the moves played from the position in the games that pass the filters (min_rating, max_rating: the players'' average; since, until: PGN dates like 2019 or 2019.06; player, white, black, source): games, results, White''s score, average rating, last date played';

CREATE VIEW pgmate.position_index_size AS
  SELECT count(*) AS runs, coalesce(sum(entries), 0)::bigint AS entries, coalesce(sum(blocks), 0)::bigint AS blocks,
         pg_total_relation_size('pgmate.position_blocks') AS bytes,
         round(pg_total_relation_size('pgmate.position_blocks')::numeric / nullif(sum(entries), 0), 2) AS bytes_per_entry
  FROM pgmate.position_runs;
COMMENT ON VIEW pgmate.position_index_size IS 'the position index: runs, entries, blocks and bytes on disk';

DROP INDEX IF EXISTS pgmate.games_position_keys_idx;
SELECT pgmate.position_index_rebuild();
