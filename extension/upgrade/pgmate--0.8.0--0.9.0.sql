-- pgmate 0.8.0 -> 0.9.0: security and reliability. Learning runs belong to the role that
-- made them and are resumed only by it; stored settings are validated again on every call;
-- engines cannot pin a backend; bounded work everywhere; locks that need a privilege.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.9.0'" to load this file. \quit

-- The position index is written only by the extension's own code, under a lock that needs
-- a privilege (it was an advisory lock, which any role could hold).
CREATE TABLE pgmate.position_index_lock () WITH (autovacuum_enabled = false);
COMMENT ON TABLE pgmate.position_index_lock IS 'the position index''s lock (never written)';
ALTER TABLE pgmate.position_runs ADD COLUMN merged_from bigint[], ADD COLUMN part int, ADD COLUMN parts int;
ALTER FUNCTION pgmate.position_index_trigger() SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_trigger() FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge(boolean) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge(boolean) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge_part(bigint[], int, int) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int)
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) IS
  'in one step, the runs give way to the parts merged from them (at `level`), retired; 40001 when the index changed meanwhile; 22023 unless the parts are every non-empty share of one merge of exactly these runs';
ALTER FUNCTION pgmate.position_index_clean(int, int) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_clean(int, int) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_rebuild() SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_rebuild() FROM PUBLIC;

-- moves[1] is a game's first move: arrays numbered from elsewhere are renumbered (a slice
-- starts at 1), then refused.
UPDATE pgmate.games SET moves = moves[:] WHERE array_lower(moves, 1) <> 1;
ALTER TABLE pgmate.games ADD CONSTRAINT games_moves_numbered_from_1 CHECK (array_lower(moves, 1) = 1);
