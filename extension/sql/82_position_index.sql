
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
  staged     boolean NOT NULL DEFAULT false,       -- its blocks are in position_staged_blocks
  -- a part (level -1): the runs it was merged from and its share (part of parts) of their
  -- keys, so that only a whole merge is published
  merged_from bigint[],
  part       int,
  parts      int
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

-- The index's lock, a table never written (extension/src/position_index.cpp): statements that
-- add runs take it in ROW EXCLUSIVE mode, whatever rewrites or removes runs in SHARE ROW
-- EXCLUSIVE mode. Taking either needs a privilege on it that no role is granted.
CREATE TABLE pgmate.position_index_lock () WITH (autovacuum_enabled = false);
COMMENT ON TABLE pgmate.position_index_lock IS 'the position index''s lock (never written)';

-- The explorer's counts: for each position reached by at least min_games games when they
-- were last refreshed, its games by move, speed, rating band and month
-- (core/gamedb/position_counts.h, format 1), kept by the trigger below in the same transaction
-- as the index. A bulk import (pgmate.position_index_deferred_merges) marks them stale and
-- its end refreshes them; while stale, the explorer reads the games. Never written by hand.
CREATE TABLE pgmate.position_counts (
  key   bigint PRIMARY KEY,                   -- the position's key, the sign bit flipped as in position_blocks
  games bigint NOT NULL CHECK (games >= 0),
  data  bytea NOT NULL
);
COMMENT ON TABLE pgmate.position_counts IS
  'the explorer''s counts of the positions reached by many games (kept by pgmate.games'' trigger)';
CREATE TABLE pgmate.position_counts_state (
  one_row      boolean PRIMARY KEY DEFAULT true CHECK (one_row),
  min_games    int NOT NULL DEFAULT 100 CHECK (min_games >= 1),  -- of the last refresh
  stale        boolean NOT NULL DEFAULT false,  -- a bulk import's games are not counted yet
  version      bigint NOT NULL DEFAULT 0,       -- the transaction of the last refresh: which positions are counted
  refreshed_at timestamptz
);
COMMENT ON TABLE pgmate.position_counts_state IS 'the explorer''s counts: stale or not, and their last refresh';
INSERT INTO pgmate.position_counts_state DEFAULT VALUES;

-- Only the extension's own code writes the index: the trigger and the maintenance
-- functions run as the extension's owner (adding games needs no privilege on the index
-- tables), build every block from the rows of pgmate.games, and name every object with its
-- schema (search_path: pg_catalog only).
CREATE FUNCTION pgmate.position_index_trigger() RETURNS trigger
  AS 'MODULE_PATHNAME', 'position_index_trigger' LANGUAGE C
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_trigger() FROM PUBLIC;
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
  AS 'MODULE_PATHNAME', 'position_index_merge' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge(boolean) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_merge(boolean) IS
  'all_runs: merges every run of the position index into one (fastest searches); false: only the levels that are full, as inserts do (after a bulk import with pgmate.position_index_deferred_merges); returns the entries of the index';
-- A merge on several connections at once (pgmate import's last step): each merges its
-- share of the key space into a part, invisible until one call publishes them all in
-- place of the runs they came from; then each removes a share of those runs.
CREATE FUNCTION pgmate.position_index_merge_part(runs bigint[], part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_part' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) IS
  'merges the keys of share `part` of `parts` of the runs into a part not yet searched; its run id (NULL when empty)';
CREATE FUNCTION pgmate.position_index_merge_publish(runs bigint[], parts bigint[], level int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_publish' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) IS
  'in one step, the runs give way to the parts merged from them (at `level`), retired; 40001 when the index changed meanwhile; 22023 unless the parts are every non-empty share of one merge of exactly these runs';
CREATE FUNCTION pgmate.position_index_clean(part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_clean' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_clean(int, int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_clean(int, int) IS
  'removes share `part` of `parts` of the runs a publication retired, with their blocks (the next change to the index removes them otherwise); the runs removed';
CREATE FUNCTION pgmate.position_counts_refresh(min_games int DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_counts_refresh' LANGUAGE C VOLATILE
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_counts_refresh(int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_counts_refresh(int) IS
  'counts again every position reached by min_games games or more (NULL: as the last refresh did; 100 at first), from the position index, for the explorer; returns the positions counted';
CREATE FUNCTION pgmate.position_index_rebuild() RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_rebuild' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_rebuild() FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_rebuild() IS
  'builds the position index and the explorer''s counts again from pgmate.games; returns the index''s entries';

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
-- last month played per move, as lichess's explorer shows them: from the position's counts
-- where they are kept and the filters are speeds, ratings on lichess's band limits (1000,
-- 1200, ... 2500) and months; else the same tally over the position's games read from
-- pgmate.games (as fast as the position is rare). Filters: min_rating, max_rating (the
-- players' average), since, until (a year or a month: 2019 or 2019.06), player, white,
-- black, source, speed (pgmate.game_speed's names, one or an array).
CREATE FUNCTION pgmate.explorer(board board, filters jsonb,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8, OUT average_rating int, OUT last_played text)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer_filtered' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 20;
COMMENT ON FUNCTION pgmate.explorer(board, jsonb) IS
  'the moves played from the position in the games that pass the filters (min_rating, max_rating: the players'' average; since, until: a year or a month, 2019 or 2019.06; player, white, black, source; speed: lichess''s speed of the TimeControl, one or an array): games, results, White''s score, average rating, last month played';

-- The position's top games, as lichess's explorer lists them: the rated games that reached
-- it with the highest players' average rating, best first (ties: the lower id). The counts
-- keep a counted position's four best; a deleted or changed game among them leaves that
-- position's read from pgmate.games until the next refresh.
CREATE FUNCTION pgmate.explorer_top_games(board board, max_games int DEFAULT 4,
    OUT game bigint, OUT average_rating int) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer_top_games' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 4;
COMMENT ON FUNCTION pgmate.explorer_top_games(board, int) IS
  'the rated games that reached the position with the highest players'' average rating, best first (ties: the lower id), at most max_games: from the explorer''s counts where they hold them, else from the games';

-- The explorer's sums, which add up across servers: pgmate_cluster adds every shard's
-- (the average rating from rated and rating_sum; the latest month by last_month).
CREATE FUNCTION pgmate.explorer_parts(board board, filters jsonb DEFAULT NULL,
    OUT move move, OUT move_bits int, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT rated bigint, OUT rating_sum bigint, OUT last_month int, OUT last_played text)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer_parts' LANGUAGE C STABLE PARALLEL SAFE ROWS 20;
COMMENT ON FUNCTION pgmate.explorer_parts(board, jsonb) IS
  'the explorer''s sums by move (NULL filters: every game, as explorer(board)): games, results, the rated games and their ratings'' sum, the latest month as a number and as text, and the move''s bits (the explorer''s order for ties)';

CREATE VIEW pgmate.position_index_size AS
  SELECT count(*) FILTER (WHERE level >= 0) AS runs, coalesce(sum(entries) FILTER (WHERE level >= 0), 0)::bigint AS entries,
         coalesce(sum(blocks), 0)::bigint AS blocks,
         pg_total_relation_size('pgmate.position_blocks') + pg_total_relation_size('pgmate.position_staged_blocks') AS bytes,
         round((pg_total_relation_size('pgmate.position_blocks') + pg_total_relation_size('pgmate.position_staged_blocks'))::numeric /
               nullif(sum(entries) FILTER (WHERE level >= 0), 0), 2) AS bytes_per_entry,
         (SELECT count(*) FROM pgmate.position_counts) AS counted_positions,
         pg_total_relation_size('pgmate.position_counts') AS count_bytes
  FROM pgmate.position_runs;
COMMENT ON VIEW pgmate.position_index_size IS
  'the position index: runs, entries, blocks and bytes on disk; the positions the explorer''s counts hold and their bytes';
