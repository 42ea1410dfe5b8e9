-- pgmate 0.7.0 -> 0.8.0: the position index (pgmate.position_games, position_count, explorer),
-- kept by triggers on pgmate.games and built here for the games already stored. It
-- replaces the GIN index over game_keys(start, moves). And game_hash, to find copies of
-- a game; material and pattern search; move[] operators by the moves' bits; the learning
-- loop's arena_search and optimizer_state options, and training's optimizer_from.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.8.0'" to load this file. \quit

-- ============================================================ game_hash, material and square signatures
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
CREATE FUNCTION square_signature(start board, moves move[]) RETURNS bytea
  AS 'MODULE_PATHNAME', 'square_signature' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION square_signature(board, move[]) IS
  'the squares each side''s king, pawns and other pieces stood on during a game, 48 bytes (what pattern search prunes by); NULL for an illegal game';
-- One rewrite of the table for both (each game replayed once: the two share its summary).
ALTER TABLE pgmate.games
  ADD COLUMN material_signature bigint GENERATED ALWAYS AS (material_signature(start, moves)) STORED,
  ADD COLUMN square_signature bytea GENERATED ALWAYS AS (square_signature(start, moves)) STORED;

-- ============================================================ move[] operators
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

-- ============================================================ the position index
-- Every distinct position of every game in pgmate.games as an entry (position key, game,
-- the move played from it, the result), in sorted, delta-coded blocks (core/gamedb). A
-- statement's new games make one run of blocks; runs are merged as they accumulate, as an
-- LSM tree does. Kept by the trigger below: never written by hand.
CREATE TABLE pgmate.position_runs (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  level      int NOT NULL CHECK (level >= -2),     -- 0: one statement's games; n + 1: merged level-n runs;
                                                   -- -1: a part of a parallel merge, not yet published;
                                                   -- -2: merged into published parts, to be removed
  entries    bigint NOT NULL CHECK (entries >= 0),
  blocks     int NOT NULL CHECK (blocks >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  staged     boolean NOT NULL DEFAULT false        -- its blocks are in position_staged_blocks
);
COMMENT ON TABLE pgmate.position_runs IS 'runs of the position index (kept by pgmate.games'' trigger)';

-- first_key and last_key hold the keys with the sign bit flipped, so that SQL's signed
-- order is the blocks' unsigned order.
CREATE TABLE pgmate.position_blocks (
  run_id    bigint NOT NULL,  -- a run of position_runs (no foreign key: checking it for every
                              -- block stored cost a sixth of the writing; runs go with their blocks)
  first_key bigint NOT NULL,
  seq       int NOT NULL,
  last_key  bigint NOT NULL,
  data      bytea NOT NULL,
  PRIMARY KEY (run_id, first_key, seq)
) WITH (fillfactor = 100);
COMMENT ON TABLE pgmate.position_blocks IS 'sorted blocks of the position index (kept by pgmate.games'' trigger)';
ALTER TABLE pgmate.position_blocks ALTER COLUMN data SET STORAGE MAIN;  -- inline; random bytes do not compress
-- The runs of a bulk import (pgmate.position_index_deferred_merges on), until its final
-- merge: a table of their own, which that merge then empties with one TRUNCATE where
-- deleting a million games' runs block by block took seconds and wrote every page again.
-- No autovacuum: its rows live from an import's first batch to its end, and a vacuum or
-- analyze in between reads them for nothing and holds a lock that keeps the TRUNCATE off.
CREATE TABLE pgmate.position_staged_blocks (
  run_id    bigint NOT NULL,
  first_key bigint NOT NULL,
  seq       int NOT NULL,
  last_key  bigint NOT NULL,
  data      bytea NOT NULL,
  PRIMARY KEY (run_id, first_key, seq)
) WITH (fillfactor = 100, autovacuum_enabled = false);
COMMENT ON TABLE pgmate.position_staged_blocks IS
  'blocks of the position index''s runs written by a bulk import, until it merges them (kept by pgmate.games'' trigger)';
ALTER TABLE pgmate.position_staged_blocks ALTER COLUMN data SET STORAGE MAIN;

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
-- A merge on several connections at once (pgmate import's last step): each merges its
-- share of the key space into a part, invisible until one call publishes them all in
-- place of the runs they came from; then each removes a share of those runs.
CREATE FUNCTION pgmate.position_index_merge_part(runs bigint[], part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_part' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) IS
  'merges the keys of share `part` of `parts` of the runs into a part not yet searched; its run id (NULL when empty)';
CREATE FUNCTION pgmate.position_index_merge_publish(runs bigint[], parts bigint[], level int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_publish' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) IS
  'in one step, the runs give way to the parts merged from them (at `level`), retired; 40001 when the index changed meanwhile';
CREATE FUNCTION pgmate.position_index_clean(part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_clean' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.position_index_clean(int, int) IS
  'removes share `part` of `parts` of the runs a publication retired, with their blocks (the next change to the index removes them otherwise); the runs removed';
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
  SELECT count(*) FILTER (WHERE level >= 0) AS runs, coalesce(sum(entries) FILTER (WHERE level >= 0), 0)::bigint AS entries,
         coalesce(sum(blocks), 0)::bigint AS blocks,
         pg_total_relation_size('pgmate.position_blocks') + pg_total_relation_size('pgmate.position_staged_blocks') AS bytes,
         round((pg_total_relation_size('pgmate.position_blocks') + pg_total_relation_size('pgmate.position_staged_blocks'))::numeric /
               nullif(sum(entries) FILTER (WHERE level >= 0), 0), 2) AS bytes_per_entry
  FROM pgmate.position_runs;
COMMENT ON VIEW pgmate.position_index_size IS 'the position index: runs, entries, blocks and bytes on disk';

DROP INDEX IF EXISTS pgmate.games_position_keys_idx;
SELECT pgmate.position_index_rebuild();

-- ============================================================ training
-- The last checkpoint of a run, for a later run that continues its optimizer (the
-- training option optimizer_from); 22023 naming the run when it has none.
CREATE FUNCTION pgmate.training_optimizer(run bigint) RETURNS bytea
  LANGUAGE plpgsql STABLE
  AS $$
  DECLARE state bytea;
  BEGIN
    SELECT c.state INTO state FROM pgmate.training_checkpoints c WHERE c.run_id = run ORDER BY c.step DESC LIMIT 1;
    IF state IS NULL THEN
      RAISE EXCEPTION 'optimizer_from: training run % %', run,
        CASE WHEN EXISTS (SELECT 1 FROM pgmate.training_runs r WHERE r.id = run) THEN 'has no checkpoint'
             ELSE 'not found' END
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN state;
  END
  $$;
REVOKE ALL ON FUNCTION pgmate.training_optimizer(bigint) FROM PUBLIC;

-- ============================================================ the learning loop
-- arena_search: the root search of the networks in arena games (puct by default, as before);
-- optimizer_state: carry (a candidate's training continues the optimizer of the training
-- before it; the default for new runs) or fresh (as runs began before, and still do);
-- promotion_elo0/promotion_elo1: promotion by SPRT (learning_match passes the SPRT's options
-- and returns its verdict)
CREATE OR REPLACE FUNCTION pgmate.learning_settings(given jsonb, stored jsonb DEFAULT NULL) RETURNS jsonb
  LANGUAGE plpgsql STABLE
  AS $$
  DECLARE
    spec record;
    key text;
    value jsonb;
    resolved jsonb := '{}';
    number float8;
  BEGIN
    IF given IS NULL THEN given := '{}'; END IF;
    IF jsonb_typeof(given) <> 'object' THEN
      RAISE EXCEPTION 'learn options must be a JSON object, not %', given USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR key IN SELECT jsonb_object_keys(given) LOOP
      IF key NOT IN (SELECT name FROM pgmate.learning_options) THEN
        RAISE EXCEPTION 'unknown learn option "%"', key USING ERRCODE = 'invalid_parameter_value',
          HINT = 'known: ' || (SELECT string_agg(name, ', ' ORDER BY position) FROM pgmate.learning_options);
      END IF;
    END LOOP;
    FOR spec IN SELECT * FROM pgmate.learning_options ORDER BY position LOOP
      value := given -> spec.name;
      IF value IS NULL OR value = 'null' THEN
        CONTINUE;
      END IF;
      IF spec.kind = 'text' THEN
        IF jsonb_typeof(value) <> 'string' OR (spec.choices IS NOT NULL AND NOT (value #>> '{}' = ANY (spec.choices))) THEN
          RAISE EXCEPTION 'learn option "%": % is not %', spec.name, value,
            coalesce('one of ' || array_to_string(spec.choices, ', '), 'a string')
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
      ELSE
        IF jsonb_typeof(value) <> 'number' THEN
          RAISE EXCEPTION 'learn option "%": % is not a number', spec.name, value USING ERRCODE = 'invalid_parameter_value';
        END IF;
        number := (value #>> '{}')::float8;
        IF (spec.kind = 'int' AND number <> trunc(number)) OR number < spec.low OR number > spec.high THEN
          RAISE EXCEPTION 'learn option "%": % is not % from % to %', spec.name, value,
            CASE spec.kind WHEN 'int' THEN 'an integer' ELSE 'a number' END, spec.low, spec.high
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
      END IF;
      IF NOT spec.per_call THEN
        resolved := resolved || jsonb_build_object(spec.name, value);
      END IF;
    END LOOP;
    IF stored IS NOT NULL THEN
      FOR key, value IN SELECT * FROM jsonb_each(resolved) LOOP
        IF stored -> key IS DISTINCT FROM value THEN
          RAISE EXCEPTION 'learn option "%": the run has %, not %', key, coalesce(stored -> key, 'null'), value
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A run''s settings stay as it began; start another run to change them.';
        END IF;
      END LOOP;
      RETURN stored;
    END IF;
    -- Defaults, some following others.
    FOR spec IN SELECT * FROM pgmate.learning_options WHERE NOT per_call AND default_value IS NOT NULL LOOP
      IF NOT resolved ? spec.name THEN
        resolved := resolved || jsonb_build_object(spec.name, spec.default_value);
      END IF;
    END LOOP;
    IF NOT resolved ? 'cheap_simulations' THEN
      resolved := resolved || jsonb_build_object('cheap_simulations', greatest(1, (resolved->>'simulations')::int / 4));
    END IF;
    IF NOT resolved ? 'arena_simulations' THEN
      resolved := resolved || jsonb_build_object('arena_simulations', resolved->'simulations');
    END IF;
    IF NOT resolved ? 'veto_games' THEN
      resolved := resolved || jsonb_build_object('veto_games', 2 * ceil((resolved->>'arena_games')::int / 4.0)::int);
    END IF;
    IF NOT resolved ? 'pretrain_mix' THEN
      resolved := resolved || jsonb_build_object('pretrain_mix', CASE WHEN resolved ? 'pretrain_data' THEN 0.5 ELSE 0 END);
    END IF;
    -- Fine-tuning a given network: a smaller step and a firmer hold on its policy, chosen on
    -- validation games (bench/RESULTS.md, "learn"): at the learning rate of a new network
    -- the first 100 steps cost it two points of top-1 on games it never saw.
    IF NOT resolved ? 'lr' THEN
      resolved := resolved || jsonb_build_object('lr', CASE WHEN given ? 'network' THEN 0.0003 ELSE 0.001 END);
    END IF;
    IF NOT resolved ? 'kl_weight' THEN
      resolved := resolved || jsonb_build_object('kl_weight', CASE WHEN given ? 'network' THEN 1.0 ELSE 0 END);
    END IF;
    IF NOT resolved ? 'seed' THEN
      resolved := resolved || jsonb_build_object('seed', floor(random() * 2147483647)::bigint);
    END IF;
    IF (resolved->>'pretrain_mix')::float8 > 0 AND NOT resolved ? 'pretrain_data' THEN
      RAISE EXCEPTION 'learn option "pretrain_mix": % needs "pretrain_data", a query of pretraining rows',
        resolved->'pretrain_mix' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (resolved->>'arena_games')::int % 2 <> 0 OR (resolved->>'veto_games')::int % 2 <> 0
       OR (resolved->>'sanity_games')::int % 2 <> 0 THEN
      RAISE EXCEPTION 'learn options "arena_games", "veto_games" and "sanity_games" must be even (games are played in pairs, colours swapped)'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF resolved ? 'promotion_elo1' AND (resolved->>'promotion_elo1')::float8 <= (resolved->>'promotion_elo0')::float8 THEN
      RAISE EXCEPTION 'learn option "promotion_elo1" (%) must be above "promotion_elo0" (%)',
        resolved->'promotion_elo1', resolved->'promotion_elo0' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (resolved->>'veto_threshold')::float8 >= (resolved->>'promotion_threshold')::float8 THEN
      RAISE EXCEPTION 'learn option "veto_threshold" (%) must be below "promotion_threshold" (%)',
        resolved->'veto_threshold', resolved->'promotion_threshold' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF resolved->>'openings' = 'eco' AND NOT EXISTS (SELECT 1 FROM pgmate.openings) THEN
      RAISE EXCEPTION 'learn option "openings": "eco" needs the ECO lines in pgmate.openings'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Load them with pgmate import --openings, or give "openings": "startpos".';
    END IF;
    RETURN resolved;
  END
  $$;

DROP PROCEDURE pgmate.learning_match(text, jsonb, jsonb, int, bigint, int, int, text, jsonb);
-- One match of an arena round, played (or resumed, or found finished) under its name; its
-- result from the candidate's side as the jsonb of learning_iterations.arena (with the
-- SPRT's verdict, H0 or H1, when `extra` asks for one: pgmate.arena's sprt_* options).
CREATE PROCEDURE pgmate.learning_match(name text, candidate jsonb, opponent jsonb, games int, seed bigint,
                                       max_plies int, parallel int, openings text, extra jsonb,
                                       INOUT result jsonb DEFAULT NULL)
  LANGUAGE plpgsql
  AS $$
  BEGIN
    IF NOT EXISTS (SELECT 1 FROM pgmate.matches m WHERE m.name = learning_match.name AND m.status <> 'running') THEN
      CALL pgmate.arena(candidate, opponent, games,
                        jsonb_build_object('name', name, 'seed', seed, 'openings', openings, 'max_plies', max_plies,
                                           'parallel', least(parallel, games)) || coalesce(extra, '{}'));
    END IF;
    SELECT jsonb_strip_nulls(jsonb_build_object('match', r.name, 'opponent', opponent, 'games', r.games, 'wins', r.wins,
                                                'draws', r.draws, 'losses', r.losses, 'score', r.score, 'elo', r.elo,
                                                'elo_lower', r.elo_lower, 'elo_upper', r.elo_upper,
                                                'sprt', r.sprt_verdict))
      INTO result FROM pgmate.match_results r WHERE r.name = learning_match.name;
  END
  $$;
REVOKE ALL ON PROCEDURE pgmate.learning_match(text, jsonb, jsonb, int, bigint, int, int, text, jsonb, jsonb) FROM PUBLIC;

CREATE OR REPLACE VIEW pgmate.learning_options AS
  SELECT * FROM (VALUES
    (1, 'network', 'int', 1, 9.2e18, NULL::text[], NULL::jsonb, true,
        'a new run starts from this network (default: a new network of the preset)'),
    (2, 'preset', 'text', NULL, NULL, '{tiny,small,seed}', '"small"', false, 'network preset of a new run without network'),
    (3, 'games', 'int', 1, 100000, NULL, '32', false, 'self-play games per iteration'),
    (4, 'simulations', 'int', 1, 100000, NULL, '32', false, 'search simulations per move in self-play'),
    (5, 'search', 'text', NULL, NULL, '{puct,gumbel}', '"gumbel"', false, 'self-play root search'),
    (6, 'parallel', 'int', 1, 4096, NULL, '16', false, 'self-play games in progress at once'),
    (7, 'max_plies', 'int', 10, 100000, NULL, '300', false, 'self-play and arena games end as draws after this many plies'),
    (8, 'full_search_fraction', 'number', 0, 1, NULL, '1', false, 'share of moves searched in full (playout cap randomization); the rest get cheap_simulations and are no policy target'),
    (9, 'cheap_simulations', 'int', 1, 100000, NULL, NULL, false, 'simulations of a cheap search (default: simulations / 4)'),
    (10, 'steps', 'int', 1, 10000000, NULL, '100', false, 'training steps per iteration'),
    (11, 'batch', 'int', 1, 8192, NULL, '128', false, 'positions per training step'),
    (12, 'lr', 'number', 1e-7, 10, NULL, NULL, false, 'AdamW learning rate (default 0.0003 when the run starts from a network, else 0.001; escalation level 2 halves it)'),
    (13, 'optimizer_state', 'text', NULL, NULL, '{carry,fresh}', '"carry"', false, 'carry: each training continues the AdamW moments of the one that made the current network (a veto starts afresh); fresh: a new optimizer every iteration'),
    (14, 'window', 'int', 1, 100000000, NULL, '20000', false, 'newest self-play positions trained on'),
    (15, 'pretrain_mix', 'number', 0, 0.95, NULL, NULL, false, 'share of pretraining rows in the training data (default 0.5 with pretrain_data, else 0)'),
    (16, 'pretrain_data', 'text', NULL, NULL, NULL, NULL, false, 'a query of pretraining rows: board, history, repetitions, played, wdl (as pgmate.game_targets)'),
    (17, 'kl_weight', 'number', 0, 100, NULL, NULL, false, 'weight of KL to the start network (default 1 when the run starts from a network, else 0)'),
    (18, 'value_target', 'text', NULL, NULL, '{z,q,mix}', '"z"', false, 'value target: game result z, search value q, or a mix'),
    (19, 'q_ratio', 'number', 0, 1, NULL, '0.5', false, 'share of q in the value target with value_target mix'),
    (20, 'sample_one_in', 'int', 1, 1000, NULL, '1', false, 'train on 1 of every k positions of a game'),
    (21, 'holdout', 'text', NULL, NULL, NULL, NULL, false, 'a query of held-out rows, measured after every training'),
    (22, 'arena_interval', 'int', 1, 1000, NULL, '1', false, 'iterations between arena rounds'),
    (23, 'arena_games', 'int', 2, 100000, NULL, '20', false, 'games of the candidate against the best network'),
    (24, 'arena_simulations', 'int', 1, 100000, NULL, NULL, false, 'simulations per move in arena games (default: simulations)'),
    (25, 'arena_search', 'text', NULL, NULL, '{puct,gumbel}', '"puct"', false, 'root search of the networks in arena games'),
    (26, 'promotion_threshold', 'number', 0, 1, NULL, '0.55', false, 'score against the best network that promotes the candidate'),
    (27, 'promotion_elo0', 'number', -1000, 1000, NULL, '0', false, 'with promotion_elo1: the SPRT''s H0, the Elo (over the best) that must not promote'),
    (28, 'promotion_elo1', 'number', -1000, 1000, NULL, NULL, false, 'promotion by SPRT (H1: this Elo over the best, alpha = beta = 0.05; arena_games the most games): promoted only when H1 is accepted; without it, the score threshold decides'),
    (29, 'veto_threshold', 'number', 0, 1, NULL, '0.35', false, 'a score below this against the best, an older or the start network vetoes'),
    (30, 'veto_games', 'int', 0, 100000, NULL, NULL, false, 'games against an older best and the start network (default: half of arena_games; 0: none)'),
    (31, 'sanity_games', 'int', 0, 100000, NULL, '10', false, 'games against random and mcts:arena_simulations, recorded with every arena round'),
    (32, 'kl_warning', 'number', 0, 100, NULL, '0.15', false, 'a KL above this is warned about'),
    (33, 'kl_arena', 'number', 0, 100, NULL, '0.3', false, 'a KL above this calls an arena round at once'),
    (34, 'seed', 'int', 0, 9.2e18, NULL, NULL, false, 'seeds self-play, sampling and arena openings (default: random)'),
    (35, 'openings', 'text', NULL, NULL, '{eco,startpos}', '"eco"', false, 'arena openings: pgmate.openings drawn by the seed (pgmate import --openings loads them), or the start position'),
    (36, 'stop_after', 'text', NULL, NULL, '{selfplay,training}', NULL, true, 'this call stops after that step of its first iteration (the iteration stays in progress)')
  ) AS o (position, name, kind, low, high, choices, default_value, per_call, description);

CREATE OR REPLACE PROCEDURE pgmate.learn(run text, iterations int, options jsonb DEFAULT '{}')
  LANGUAGE plpgsql
  AS $$
  DECLARE
    r pgmate.learning_runs;
    s jsonb;
    k int;
    n int;
    label text;
    best_games int;
    done_games int;
    missing record;
    selfplay_options jsonb;
    t0 timestamptz;
    selfplay_seconds float8;
    training_seconds float8;
    arena_seconds float8;
    data_query text;
    train_options jsonb;
    candidate bigint;
    training_run bigint;
    optimizer_from bigint;
    promotion_sprt jsonb;  -- the SPRT options of the match against the best, or NULL
    last_log record;
    arena_round bool;
    arena jsonb;
    m jsonb;
    veto_scores float8[];
    older bigint;
    net_player text;  -- format of a network in arena games: net:%s:SIMULATIONS[:search=gumbel]
    decision text;
    reason text;
    esc record;
    excluded int;
    game_count int;
    position_count bigint;
    window_count bigint;
    pretrain_count bigint;
    stop_after text := options->>'stop_after';
    lock_key int;
  BEGIN
    IF run IS NULL OR iterations IS NULL OR iterations < 0 THEN
      RAISE EXCEPTION 'learn: run must be a name and iterations a number >= 0'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO r FROM pgmate.learning_runs WHERE name = run;
    IF FOUND THEN
      IF options ? 'network' AND (options->>'network')::bigint IS DISTINCT FROM r.start_network THEN
        RAISE EXCEPTION 'learn option "network": run "%" started from network %, not %', run, r.start_network,
          options->'network' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      PERFORM pgmate.learning_settings(options, r.settings);
    ELSE
      s := pgmate.learning_settings(options);
      IF options ? 'network' THEN
        IF NOT EXISTS (SELECT 1 FROM pgmate.networks WHERE id = (options->>'network')::bigint) THEN
          RAISE EXCEPTION 'learn option "network": network % not found in pgmate.networks', options->'network'
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        candidate := (options->>'network')::bigint;
      ELSE
        candidate := pgmate.init_network(run || ' start', jsonb_build_object('preset', s->>'preset'),
                                         (s->>'seed')::bigint);
      END IF;
      INSERT INTO pgmate.learning_runs (name, settings, start_network, best_network, current_network, pretrain_mix, lr)
      VALUES (run, s, candidate, candidate, candidate, (s->>'pretrain_mix')::float8, (s->>'lr')::float8)
      RETURNING * INTO r;
      RAISE NOTICE 'learn: run "%" (%) begins with network %', run, r.id, candidate;
    END IF;
    lock_key := (r.id % 2147483647)::int;
    IF NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
                   AND classid = hashtext('pgmate.learning_runs')::oid AND objid = lock_key::oid AND granted) THEN
      IF NOT pg_try_advisory_lock(hashtext('pgmate.learning_runs'), lock_key) THEN
        RAISE EXCEPTION 'learn: run "%" is being worked on by another session', run
          USING ERRCODE = 'lock_not_available';
      END IF;
    END IF;
    UPDATE pgmate.learning_runs SET status = 'running', updated_at = now() WHERE id = r.id;
    COMMIT;

    FOR round_no IN 1 .. iterations LOOP
      SELECT * INTO r FROM pgmate.learning_runs WHERE id = r.id;
      s := r.settings;
      k := r.iterations + 1;
      label := 'learn:' || r.id || ':' || k;
      n := (s->>'games')::int;

      -- 1. Self-play: games 0 .. n-1 of the iteration, each seeded by its index; the first
      -- best_games with the best network, the rest with the current one (escalation level
      -- 3). Those already stored are skipped, so a resumed iteration plays the same games.
      t0 := clock_timestamp();
      best_games := n - floor(n * r.current_share)::int;
      selfplay_options := jsonb_build_object(
        'run', label, 'seed', ((s->>'seed')::bigint + k::bigint * 1000003) % 9000000000000000000,
        'search', s->'search', 'max_plies', s->'max_plies',
        'full_search_fraction', s->'full_search_fraction', 'cheap_simulations', s->'cheap_simulations');
      FOR missing IN
        -- contiguous ranges of the game indices not stored yet
        WITH todo AS (
          SELECT x FROM generate_series(0, n - 1) x
          WHERE NOT EXISTS (SELECT 1 FROM pgmate.games g
                            WHERE g.source = 'selfplay' AND g.selfplay->>'run' = label
                              AND (g.selfplay->>'index')::int = x)),
        grouped AS (
          SELECT x, x - row_number() OVER (ORDER BY x) AS grp, x < best_games AS by_best FROM todo)
        SELECT min(x) AS first, count(*)::int AS games, by_best FROM grouped GROUP BY grp, by_best ORDER BY 1
      LOOP
        RAISE NOTICE 'learn: run "%" iteration %: self-play games % to % of %', run, k, missing.first + 1,
          missing.first + missing.games, n;
        CALL pgmate.selfplay(missing.games, (s->>'simulations')::int,
                             CASE WHEN missing.by_best THEN r.best_network ELSE r.current_network END,
                             (s->>'parallel')::int, selfplay_options || jsonb_build_object('first_game', missing.first));
      END LOOP;
      selfplay_seconds := extract(epoch FROM clock_timestamp() - t0);
      IF stop_after = 'selfplay' THEN
        RAISE NOTICE 'learn: run "%" iteration % stops after self-play, as asked', run, k;
        EXIT;
      END IF;

      -- 2. Training: the current network on the iteration's rows; a training run of them
      -- that already finished is not repeated.
      t0 := clock_timestamp();
      data_query := format('SELECT * FROM pgmate.learning_data(%s, %s)', r.id, k);
      SELECT tr.new_network, tr.id INTO candidate, training_run FROM pgmate.training_runs tr
      WHERE tr.network_id = r.current_network AND tr.data = data_query AND tr.status = 'finished'
      ORDER BY tr.id DESC LIMIT 1;
      IF candidate IS NULL THEN
        train_options := jsonb_build_object(
          'batch', s->'batch', 'optimizer', 'adamw', 'lr', r.lr, 'schedule', 'constant',
          'log_every', least((s->>'steps')::int, 50), 'checkpoint_every', least((s->>'steps')::int, 50),
          'seed', (s->>'seed')::bigint % 2147483647 + k, 'name', run || ' ' || k);
        IF (s->>'kl_weight')::float8 > 0 THEN
          train_options := train_options || jsonb_build_object('kl_weight', s->'kl_weight', 'kl_reference', r.start_network);
        END IF;
        IF s ? 'holdout' THEN
          train_options := train_options || jsonb_build_object('holdout', s->'holdout');
        END IF;
        -- The optimizer goes on from the training that made the current network, unless a
        -- veto has put the best network back since (escalation starts a fresh optimizer).
        -- Runs from before this setting train with a fresh one, as they began.
        optimizer_from := NULL;
        IF s->>'optimizer_state' = 'carry' THEN
          SELECT i.training_run INTO optimizer_from FROM pgmate.learning_iterations i
          WHERE i.run_id = r.id AND i.iteration = k - 1 AND i.decision <> 'vetoed' AND i.candidate = r.current_network;
          IF optimizer_from IS NOT NULL THEN
            train_options := train_options || jsonb_build_object('optimizer_from', optimizer_from);
          END IF;
        END IF;
        RAISE NOTICE 'learn: run "%" iteration %: training network % for % steps', run, k, r.current_network, s->'steps';
        CALL pgmate.train(r.current_network, data_query, (s->>'steps')::bigint, train_options, candidate);
        SELECT tr.id INTO training_run FROM pgmate.training_runs tr
        WHERE tr.new_network = candidate;
      END IF;
      training_seconds := extract(epoch FROM clock_timestamp() - t0);
      SELECT p.policy_loss, p.value_loss, p.kl, p.holdout_top1 INTO last_log
      FROM pgmate.training_progress p WHERE p.run_id = training_run ORDER BY p.step DESC LIMIT 1;
      IF last_log.kl > (s->>'kl_warning')::float8 THEN
        RAISE WARNING 'learn: run "%" iteration %: KL to the start network is % (above %)', run, k,
          round(last_log.kl::numeric, 3), s->'kl_warning';
      END IF;
      IF stop_after = 'training' THEN
        RAISE NOTICE 'learn: run "%" iteration % stops after training (candidate %), as asked', run, k, candidate;
        EXIT;
      END IF;

      -- 3. Arena, every arena_interval iterations or when the KL is too high.
      t0 := clock_timestamp();
      arena_round := k % (s->>'arena_interval')::int = 0 OR coalesce(last_log.kl > (s->>'kl_arena')::float8, false);
      arena := NULL;
      veto_scores := '{}';
      promotion_sprt := CASE WHEN s ? 'promotion_elo1'
                             THEN jsonb_build_object('sprt_elo0', s->'promotion_elo0', 'sprt_elo1', s->'promotion_elo1') END;
      net_player := 'net:%s:' || (s->>'arena_simulations') ||
                    CASE WHEN s->>'arena_search' = 'gumbel' THEN ':search=gumbel' ELSE '' END;
      IF arena_round THEN
        RAISE NOTICE 'learn: run "%" iteration %: arena, network % against %', run, k, candidate, r.best_network;
        CALL pgmate.learning_match(label || ':best', to_jsonb(format(net_player, candidate)),
                                   to_jsonb(format(net_player, r.best_network)),
                                   (s->>'arena_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                   (s->>'parallel')::int, s->>'openings', promotion_sprt, m);
        arena := jsonb_build_object('best', m);
        IF (s->>'veto_games')::int > 0 THEN
          -- an older best, drawn by the seed, and the start network (when not the best itself)
          SELECT x INTO older FROM (SELECT DISTINCT i.best_network AS x FROM pgmate.learning_iterations i
                                    WHERE i.run_id = r.id) o
          WHERE x NOT IN (r.best_network, r.start_network)
          ORDER BY hashint8(x + (s->>'seed')::bigint + k) LIMIT 1;
          IF older IS NOT NULL THEN
            CALL pgmate.learning_match(label || ':older', to_jsonb(format(net_player, candidate)),
                                       to_jsonb(format(net_player, older)),
                                       (s->>'veto_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                       (s->>'parallel')::int, s->>'openings', NULL, m);
            arena := arena || jsonb_build_object('older', m);
            veto_scores := veto_scores || (m->>'score')::float8;
          END IF;
          IF r.start_network <> r.best_network THEN
            CALL pgmate.learning_match(label || ':start', to_jsonb(format(net_player, candidate)),
                                       to_jsonb(format(net_player, r.start_network)),
                                       (s->>'veto_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                       (s->>'parallel')::int, s->>'openings', NULL, m);
            arena := arena || jsonb_build_object('start', m);
            veto_scores := veto_scores || (m->>'score')::float8;
          END IF;
        END IF;
        IF (s->>'sanity_games')::int > 0 THEN
          CALL pgmate.learning_match(label || ':random', to_jsonb(format(net_player, candidate)),
                                     '"random"', (s->>'sanity_games')::int, (s->>'seed')::bigint + k,
                                     (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('random', m);
          CALL pgmate.learning_match(label || ':mcts', to_jsonb(format(net_player, candidate)),
                                     to_jsonb(format('mcts:%s', s->>'arena_simulations')), (s->>'sanity_games')::int,
                                     (s->>'seed')::bigint + k, (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('mcts', m);
        END IF;
        -- With an SPRT only its accepted H1 promotes (the score threshold stands aside); the
        -- veto threshold applies either way.
        decision := pgmate.learning_decision((arena->'best'->>'score')::float8, veto_scores,
                                             CASE WHEN promotion_sprt IS NULL THEN (s->>'promotion_threshold')::float8
                                                  WHEN arena->'best'->>'sprt' = 'H1' THEN 0
                                                  ELSE 'Infinity'::float8 END,
                                             (s->>'veto_threshold')::float8);
        IF promotion_sprt IS NULL THEN
          reason := format('score %s against the best network (promotion at %s, veto below %s)',
                           round((arena->'best'->>'score')::numeric, 3), s->>'promotion_threshold', s->>'veto_threshold');
        ELSE
          reason := format('score %s against the best network over %s games, SPRT [%s, %s]: %s (veto below %s)',
                           round((arena->'best'->>'score')::numeric, 3), arena->'best'->>'games', s->>'promotion_elo0',
                           s->>'promotion_elo1', CASE arena->'best'->>'sprt' WHEN 'H1' THEN 'H1 accepted'
                                                   WHEN 'H0' THEN 'H0 accepted' ELSE 'undecided' END,
                           s->>'veto_threshold');
        END IF;
        IF arena ? 'older' THEN
          reason := reason || format(', %s against older network %s', round((arena->'older'->>'score')::numeric, 3), older);
        END IF;
        IF arena ? 'start' THEN
          reason := reason || format(', %s against the start network', round((arena->'start'->>'score')::numeric, 3));
        END IF;
      ELSE
        decision := 'trained';
        reason := format('no arena round (every %s iterations)', s->>'arena_interval');
      END IF;
      arena_seconds := CASE WHEN arena_round THEN extract(epoch FROM clock_timestamp() - t0) END;

      -- 4. The decision, the iteration's row and the run's new state: one transaction.
      SELECT count(*), coalesce(sum(g.ply_count), 0) INTO game_count, position_count
      FROM pgmate.games g WHERE g.source = 'selfplay' AND g.selfplay->>'run' = label;
      SELECT tr.samples INTO window_count FROM pgmate.training_runs tr WHERE tr.id = training_run;
      pretrain_count := CASE WHEN r.pretrain_mix > 0
                             THEN (SELECT count(*) FROM pgmate.learning_data(r.id, k) d WHERE d.played IS NOT NULL)
                             ELSE 0 END;
      excluded := 0;
      IF decision = 'vetoed' THEN
        SELECT * INTO esc FROM pgmate.learning_escalation(least(r.veto_level + 1, 4), r.pretrain_mix, r.lr,
                                                          r.current_share);
        IF esc.exclude_share > 0 THEN
          -- the newest share of the games the window could still use
          WITH open_games AS (
            SELECT g.id FROM pgmate.games g
            WHERE g.source = 'selfplay'
              AND g.selfplay->>'run' = ANY (ARRAY(SELECT 'learn:' || r.id || ':' || j FROM generate_series(1, k) j))
              AND NOT EXISTS (SELECT 1 FROM pgmate.learning_exclusions e WHERE e.run_id = r.id AND e.game_id = g.id))
          INSERT INTO pgmate.learning_exclusions (run_id, game_id, iteration)
          SELECT r.id, o.id, k FROM open_games o
          ORDER BY o.id DESC
          LIMIT ceil(esc.exclude_share * (SELECT count(*) FROM open_games));
          GET DIAGNOSTICS excluded = ROW_COUNT;
        END IF;
        UPDATE pgmate.learning_runs
        SET iterations = k, current_network = best_network, veto_level = least(veto_level + 1, 4),
            pretrain_mix = CASE WHEN settings ? 'pretrain_data' THEN esc.new_pretrain_mix ELSE pretrain_mix END,
            lr = esc.new_lr, current_share = esc.new_current_share, updated_at = now()
        WHERE id = r.id;
      ELSE
        UPDATE pgmate.learning_runs
        SET iterations = k, current_network = candidate,
            best_network = CASE WHEN decision = 'promoted' THEN candidate ELSE best_network END,
            veto_level = CASE WHEN decision = 'promoted' THEN 0 ELSE veto_level END, updated_at = now()
        WHERE id = r.id;
      END IF;
      INSERT INTO pgmate.learning_iterations
        (run_id, iteration, best_network, candidate, training_run, games, positions, window_positions,
         pretrain_positions, policy_loss, value_loss, kl, holdout_top1, arena, promotion_score, promotion_elo,
         promotion_elo_lower, promotion_elo_upper, decision, reason, veto_level, pretrain_mix, lr, excluded_games,
         selfplay_seconds, training_seconds, arena_seconds)
      VALUES (r.id, k, r.best_network, candidate, training_run, game_count, position_count,
              window_count - pretrain_count, pretrain_count, last_log.policy_loss, last_log.value_loss, last_log.kl,
              last_log.holdout_top1, arena, (arena->'best'->>'score')::float8, (arena->'best'->>'elo')::float8,
              (arena->'best'->>'elo_lower')::float8, (arena->'best'->>'elo_upper')::float8, decision, reason,
              CASE decision WHEN 'promoted' THEN 0 WHEN 'vetoed' THEN least(r.veto_level + 1, 4) ELSE r.veto_level END,
              r.pretrain_mix, r.lr, excluded,
              selfplay_seconds, training_seconds, arena_seconds);
      RAISE NOTICE 'learn: run "%" iteration % %: %', run, k, decision, reason;
      COMMIT;
      candidate := NULL;
      training_run := NULL;
    END LOOP;
    UPDATE pgmate.learning_runs SET status = 'idle', updated_at = now() WHERE id = r.id;
    COMMIT;
    PERFORM pg_advisory_unlock(hashtext('pgmate.learning_runs'), lock_key);
  END
  $$;
