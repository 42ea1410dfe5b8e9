-- The grant recipes of docs/security.md ("Privileges and limits"), each given to a fresh role exactly
-- as written, do what they promise; and a role that may add games has no hold on the
-- position index: only the extension's own code writes it.
SELECT pgmate.wait_for_worker();
SET client_min_messages = warning;
DROP ROLE IF EXISTS pgmate_recipe_player;
DROP ROLE IF EXISTS pgmate_recipe_trainer;
DROP ROLE IF EXISTS pgmate_recipe_analyst;
DROP ROLE IF EXISTS pgmate_recipe_referee;
DROP ROLE IF EXISTS pgmate_recipe_importer;
RESET client_min_messages;
CREATE ROLE pgmate_recipe_player;
CREATE ROLE pgmate_recipe_trainer;
CREATE ROLE pgmate_recipe_analyst;
CREATE ROLE pgmate_recipe_referee;
CREATE ROLE pgmate_recipe_importer;

-- the grants of docs/security.md, verbatim but for the roles' names
-- evaluate networks and play self-play with them
GRANT USAGE ON SCHEMA pgmate TO pgmate_recipe_player;
GRANT SELECT ON pgmate.networks TO pgmate_recipe_player;              -- evaluate() reads the row on every call
GRANT EXECUTE ON FUNCTION evaluate(board[], bigint, board[][], int[]) TO pgmate_recipe_player;
GRANT EXECUTE ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) TO pgmate_recipe_player;
GRANT SELECT, INSERT ON pgmate.games TO pgmate_recipe_player;         -- self-play reads back each game's id
GRANT INSERT ON pgmate.selfplay_positions TO pgmate_recipe_player;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA pgmate TO pgmate_recipe_player;
GRANT EXECUTE ON FUNCTION pgmate.client_claim(text) TO pgmate_recipe_player;  -- pgmate selfplay claims its run's name
-- analyse games with a network (CALL pgmate.analyse(..., '"net:ID:S"')): what player has, and
GRANT EXECUTE ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) TO pgmate_recipe_player;
GRANT SELECT, INSERT ON pgmate.position_evals TO pgmate_recipe_player;      -- the analysis stores what it evaluates, as player's
-- make and train networks
GRANT USAGE ON SCHEMA pgmate TO pgmate_recipe_trainer;
GRANT SELECT, INSERT, UPDATE ON pgmate.networks TO pgmate_recipe_trainer;
GRANT EXECUTE ON FUNCTION pgmate.init_network(text, jsonb, bigint),
                          pgmate.network_init_weights(text, bigint),
                          pgmate.load_network(bigint) TO pgmate_recipe_trainer;
GRANT EXECUTE ON PROCEDURE pgmate.train(bigint, text, bigint, jsonb, bigint) TO pgmate_recipe_trainer;
GRANT EXECUTE ON FUNCTION pgmate.training_begin(bigint, text, bigint, jsonb, bigint, text, boolean),
                          pgmate.training_record(bigint, bigint, bigint, float8, float8, float8, float8, float8,
                                                 float8, float8, bigint, float8, float8, float8),
                          pgmate.training_checkpoint(bigint, bigint, bytea), pgmate.training_optimizer(bigint),
                          pgmate.training_finish(bigint, text, bytea, bytea), pgmate.training_fail(bigint, text)
  TO pgmate_recipe_trainer;
GRANT SELECT, INSERT, UPDATE ON pgmate.training_runs, pgmate.training_progress TO pgmate_recipe_trainer;
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmate.training_checkpoints TO pgmate_recipe_trainer;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA pgmate TO pgmate_recipe_trainer;  -- its query reads what the trainer may read
-- batched move generation on the worker
GRANT EXECUTE ON FUNCTION legal_moves_batch(board[]) TO pgmate_recipe_analyst;
-- arena matches (uci players also need pg_execute_server_program)
GRANT USAGE ON SCHEMA pgmate TO pgmate_recipe_referee;
GRANT EXECUTE ON PROCEDURE pgmate.arena(jsonb, jsonb, int, jsonb) TO pgmate_recipe_referee;
GRANT SELECT, INSERT, UPDATE ON pgmate.matches TO pgmate_recipe_referee;
GRANT SELECT, INSERT ON pgmate.games TO pgmate_recipe_referee;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA pgmate TO pgmate_recipe_referee;
GRANT EXECUTE ON FUNCTION pgmate.client_claim(text) TO pgmate_recipe_referee;  -- pgmate arena claims its match's name
-- add games: INSERT, pgmate.import_pgn, pgmate import
GRANT USAGE ON SCHEMA pgmate TO pgmate_recipe_importer;
GRANT SELECT, INSERT ON pgmate.games TO pgmate_recipe_importer;       -- pgmate import looks for copies
GRANT USAGE ON SEQUENCE pgmate.games_id_seq TO pgmate_recipe_importer;
GRANT SELECT ON pgmate.position_runs TO pgmate_recipe_importer;       -- pgmate import's final merge lists them
GRANT SELECT, INSERT ON pgmate.position_evals TO pgmate_recipe_importer;  -- the PGN's [%eval] comments, as importer's
GRANT EXECUTE ON FUNCTION pgmate.position_index_merge(boolean),
                          pgmate.position_index_merge_part(bigint[], int, int),
                          pgmate.position_index_merge_publish(bigint[], bigint[], int),
                          pgmate.position_index_clean(int, int),
                          pgmate.position_counts_refresh(int),  -- the explorer's counts, at the import's end
                          pgmate.import_duplicates_lock() TO pgmate_recipe_importer;  -- pgmate import --duplicates skip

-- the ids the later suites expect are given back at the end (the index's runs keep theirs)
CREATE TEMP TABLE sequences_before AS
  SELECT format('%I.%I', schemaname, sequencename) AS sequence, start_value, last_value FROM pg_sequences
  WHERE schemaname = 'pgmate' AND sequencename <> 'position_runs_id_seq';
SELECT play('startpos', '{a2a4,h7h5,a1a3,h8h6,a3b3,h6g6}'::move[]) AS probe \gset
SELECT pgmate.position_count(:'probe') AS probe_before \gset
\set VERBOSITY terse

-- player: self-play with a network
SELECT pgmate.init_network('grants', '{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}',
                           seed => 5) AS net \gset
SET ROLE pgmate_recipe_player;
SET client_min_messages = warning;
CALL pgmate.selfplay(1, 4, :net, 1, '{"seed": 1, "max_plies": 6, "run": "grants recipe"}');
RESET client_min_messages;
RESET ROLE;
SELECT count(*) AS player_games, count(*) = (SELECT count(DISTINCT game_id) FROM pgmate.selfplay_positions p
                                              WHERE p.game_id IN (SELECT id FROM pgmate.games WHERE selfplay->>'run' = 'grants recipe'))
       AS with_positions
  FROM pgmate.games WHERE selfplay->>'run' = 'grants recipe';

-- referee: a match, its games stored
SET ROLE pgmate_recipe_referee;
SET client_min_messages = warning;
CALL pgmate.arena('"mcts:4"', '"random"', 2, '{"name": "grants recipe", "seed": 1, "max_plies": 10}');
RESET client_min_messages;
RESET ROLE;
SELECT m.status, count(g.id) AS referee_games
  FROM pgmate.matches m LEFT JOIN pgmate.games g ON g.match_id = m.id
  WHERE m.name = 'grants recipe' GROUP BY m.status;

-- analyst: batched move generation
SET ROLE pgmate_recipe_analyst;
SELECT count(*) AS analyst_moves FROM legal_moves_batch(ARRAY['startpos'::board]);
RESET ROLE;

-- trainer: a network made, then trained a few steps
SET ROLE pgmate_recipe_trainer;
SELECT pgmate.init_network('grants trainer', '{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}',
                           seed => 6) AS trainer_net \gset
SET client_min_messages = warning;
CALL pgmate.train(:trainer_net,
                  $q$SELECT 'startpos'::board AS board, 'e2e4'::move AS played, 1::real AS z FROM generate_series(1, 8)$q$,
                  2, '{"batch": 4, "log_every": 1, "checkpoint_every": 1}') \gset trained_
RESET client_min_messages;
RESET ROLE;
SELECT count(*) AS trained_networks, bool_and(id = :trained_new_network) AS as_returned
  FROM pgmate.networks WHERE parent_id = :trainer_net;

-- importer: games added by INSERT and by import_pgn, the index kept for everyone
SET ROLE pgmate_recipe_importer;
INSERT INTO pgmate.games (source, white, moves) VALUES ('grants recipe', 'importer', '{a2a4,h7h5,a1a3,h8h6,a3b3,h6g6}');
SELECT pgmate.import_pgn('[White "importer"] 1. a4 h5 2. Ra3 Rh6 3. Rb3 Rg6 *') AS imported;
-- a PGN with [%eval] comments: its evaluations are the importer's
SELECT pgmate.import_pgn('[White "importer"] 1. a4 { [%eval 0.1] } h5 { [%eval 0.25] } *') AS imported;
RESET ROLE;
SELECT writer, count(*) FROM pgmate.position_evals WHERE engine = 'pgn' GROUP BY writer;
SET ROLE pgmate_recipe_importer;
-- and its own merge of the index, in parts, as pgmate import does
SET pgmate.position_index_deferred_merges = on;
INSERT INTO pgmate.games (source, white, moves) VALUES ('grants recipe', 'importer', '{a2a4,h7h5,a1a3,h8h6,a3b3,h6g6}');
INSERT INTO pgmate.games (source, white, moves) VALUES ('grants recipe', 'importer', '{a2a4,h7h5,a1a3,h8h6,a3b3}');
RESET pgmate.position_index_deferred_merges;
SELECT array_agg(id ORDER BY id) AS level_zero FROM pgmate.position_runs WHERE level = 0 \gset
SELECT pgmate.position_index_merge_part(:'level_zero', 0, 1) AS part_0 \gset
SELECT pgmate.position_index_merge_publish(:'level_zero', ARRAY[:part_0]::bigint[], 1) > 0 AS published;
SELECT pgmate.position_index_clean(0, 1) > 0 AS cleaned;
SELECT pgmate.position_counts_refresh() >= 0 AS counts_refreshed;
SELECT pgmate.position_index_merge(false) > 0 AS merged;
-- It cannot write the index's tables, nor take its lock, nor call its trigger elsewhere.
INSERT INTO pgmate.position_blocks VALUES (1, 0, 98, 0, decode(repeat('ff', 2000), 'hex'));
INSERT INTO pgmate.position_staged_blocks VALUES (1, 0, 98, 0, decode(repeat('ff', 2000), 'hex'));
INSERT INTO pgmate.position_runs (level, entries, blocks) VALUES (0, 1, 1);
UPDATE pgmate.position_runs SET entries = 0;
SELECT pgmate.position_index_rebuild();
BEGIN;
LOCK TABLE pgmate.position_index_lock IN SHARE ROW EXCLUSIVE MODE;
ROLLBACK;
BEGIN;
LOCK TABLE pgmate.position_runs IN SHARE ROW EXCLUSIVE MODE;
ROLLBACK;
RESET ROLE;
CREATE SCHEMA grants_recipe AUTHORIZATION pgmate_recipe_importer;
SET ROLE pgmate_recipe_importer;
CREATE TABLE grants_recipe.fake_games (id bigint, start board, moves move[], result text);
CREATE TRIGGER fake_index AFTER INSERT ON grants_recipe.fake_games
  REFERENCING NEW TABLE AS new_games FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();
RESET ROLE;
-- not even one a superuser sets up
CREATE TRIGGER fake_index AFTER INSERT ON grants_recipe.fake_games
  REFERENCING NEW TABLE AS new_games FOR EACH STATEMENT EXECUTE FUNCTION pgmate.position_index_trigger();
INSERT INTO grants_recipe.fake_games VALUES (1, 'startpos', '{h2h4}', '*');
DROP SCHEMA grants_recipe CASCADE;
-- the index answers everyone as before: the importer's games reached the probe three times
SELECT pgmate.position_count(:'probe') - :probe_before AS probe_games,
       (SELECT count(*) FROM pgmate.games WHERE game_keys(start, moves) @> ARRAY[board_key(:'probe')]) -
         :probe_before AS probe_games_stored;
SELECT move, games FROM pgmate.explorer(play('startpos', '{a2a4,h7h5,a1a3,h8h6,a3b3}'::move[]));
\set VERBOSITY default

-- the index's writers run as the extension's owner, with a fixed search_path, and nobody
-- but those docs/security.md names may call them
SELECT p.oid::regprocedure AS routine, p.prosecdef AS definer, p.proconfig AS settings,
       has_function_privilege('pgmate_recipe_player', p.oid, 'EXECUTE') AS player_may
  FROM pg_proc p
  WHERE p.pronamespace = 'pgmate'::regnamespace AND p.proname LIKE 'position\_index\_%'
  ORDER BY p.oid::regprocedure::text;

DELETE FROM pgmate.games WHERE source = 'grants recipe' OR selfplay->>'run' = 'grants recipe'
   OR match_id IN (SELECT id FROM pgmate.matches WHERE name = 'grants recipe') OR white = 'importer';
DELETE FROM pgmate.position_evals WHERE writer = 'pgmate_recipe_importer'::regrole;
DELETE FROM pgmate.matches WHERE name = 'grants recipe';
DELETE FROM pgmate.training_runs WHERE network_id = :trainer_net;
DELETE FROM pgmate.networks WHERE parent_id = :trainer_net;
DELETE FROM pgmate.networks WHERE id IN (:net, :trainer_net);
SELECT count(setval(sequence, coalesce(last_value, start_value), last_value IS NOT NULL)) > 3 AS sequences_restored
  FROM sequences_before;
SET client_min_messages = warning;
DROP OWNED BY pgmate_recipe_player, pgmate_recipe_trainer, pgmate_recipe_analyst, pgmate_recipe_referee,
              pgmate_recipe_importer;
DROP ROLE pgmate_recipe_player;
DROP ROLE pgmate_recipe_trainer;
DROP ROLE pgmate_recipe_analyst;
DROP ROLE pgmate_recipe_referee;
DROP ROLE pgmate_recipe_importer;
RESET client_min_messages;
