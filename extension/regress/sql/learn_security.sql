-- Whose rights a learning run acts with. A run belongs to the role that began it: only that
-- role writes its rows (row-level security) and only that role goes on with it, so its
-- stored query texts (holdout, pretrain_data) never run with another role's rights, not
-- even a superuser's or a pg_cron job's. Stored settings are checked again on every call;
-- players are built from checked numbers, never from text; the loop trusts only games,
-- training runs and matches of its own; a run is held by a lease, not an advisory lock.
SELECT pgmate.wait_for_worker();
SELECT coalesce(max(id), 0) AS before FROM pgmate.games \gset
SELECT g.last_value AS games_seq, g.is_called AS games_called, n.last_value AS networks_seq,
       n.is_called AS networks_called, m.last_value AS matches_seq, m.is_called AS matches_called,
       t.last_value AS runs_seq, t.is_called AS runs_called
FROM pgmate.games_id_seq g, pgmate.networks_id_seq n, pgmate.matches_id_seq m, pgmate.training_runs_id_seq t \gset
SET client_min_messages = warning;
DO $$
DECLARE r text;
BEGIN
  FOR r IN SELECT rolname FROM pg_roles WHERE rolname IN ('pgmate_mallory', 'pgmate_squatter', 'pgmate_planter') LOOP
    EXECUTE format('DROP OWNED BY %I', r);
    EXECUTE format('DROP ROLE %I', r);
  END LOOP;
END $$;
RESET client_min_messages;
-- mallory may go on with runs (learn needs UPDATE on learning_runs); the squatter may only
-- add runs; the planter may write what a referee and a trainer write
CREATE ROLE pgmate_mallory;
CREATE ROLE pgmate_squatter;
CREATE ROLE pgmate_planter;
CREATE SCHEMA pgmate_mallory AUTHORIZATION pgmate_mallory;
CREATE SCHEMA pgmate_squatter AUTHORIZATION pgmate_squatter;
GRANT USAGE ON SCHEMA pgmate TO pgmate_mallory, pgmate_squatter, pgmate_planter;
GRANT SELECT, UPDATE ON pgmate.learning_runs TO pgmate_mallory;
GRANT SELECT, INSERT ON pgmate.learning_runs TO pgmate_squatter;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA pgmate TO pgmate_squatter, pgmate_planter;
GRANT SELECT ON pgmate.networks, pgmate.learning_runs TO pgmate_planter;
GRANT SELECT, INSERT, UPDATE ON pgmate.matches, pgmate.training_runs, pgmate.learning_iterations,
                                pgmate.learning_games TO pgmate_planter;
GRANT SELECT, INSERT ON pgmate.games TO pgmate_planter;
GRANT EXECUTE ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) TO pgmate_planter;

SELECT pgmate.init_network('learn security', '{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}',
                           seed => 9) AS net \gset
\set options '{"network": ' :net ', "games": 2, "simulations": 4, "parallel": 2, "max_plies": 10, "steps": 2, "batch": 8, "arena_games": 2, "arena_interval": 1, "sanity_interval": 1, "veto_games": 0, "sanity_games": 0, "arena_simulations": 2, "promotion_threshold": 0.5, "seed": 3, "openings": "startpos"}'
-- the run of the superuser (0 iterations: made, not played)
SET client_min_messages = warning;
CALL pgmate.learn('shared run', 0, :'options');
RESET client_min_messages;
SELECT id AS run FROM pgmate.learning_runs WHERE name = 'shared run' \gset
SELECT owner = current_user::regrole AS mine FROM pgmate.learning_runs WHERE id = :run;

-- a function that makes its author superuser when someone else runs it
CREATE FUNCTION pgmate_mallory.pwn() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF current_user <> 'pgmate_mallory' THEN
    EXECUTE 'ALTER ROLE pgmate_mallory SUPERUSER';
    RAISE WARNING 'pwn() ran as %', current_user;
  END IF;
  RETURN true;
END $$;
ALTER FUNCTION pgmate_mallory.pwn() OWNER TO pgmate_mallory;
CREATE FUNCTION pgmate_squatter.pwn() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF current_user <> 'pgmate_squatter' THEN
    EXECUTE 'ALTER ROLE pgmate_squatter SUPERUSER';
    RAISE WARNING 'pwn() ran as %', current_user;
  END IF;
  RETURN true;
END $$;
ALTER FUNCTION pgmate_squatter.pwn() OWNER TO pgmate_squatter;

-- 1. Another role's run cannot be changed: mallory's UPDATE finds no row of hers
SET ROLE pgmate_mallory;
UPDATE pgmate.learning_runs SET settings = settings || jsonb_build_object('holdout',
  'SELECT * FROM pgmate.game_targets WHERE pgmate_mallory.pwn() LIMIT 8') WHERE name = 'shared run';
UPDATE pgmate.learning_runs SET settings = settings || '{"arena_simulations": "2:type=uci,command=/bin/true"}'
WHERE name = 'shared run';
UPDATE pgmate.learning_runs SET owner = 'pgmate_mallory' WHERE name = 'shared run';
RESET ROLE;
SELECT settings ? 'holdout' AS holdout, settings->'arena_simulations' AS arena_simulations,
       owner = current_user::regrole AS still_mine
FROM pgmate.learning_runs WHERE id = :run;

-- 2. A name taken first is the squatter's own run: nobody else's call goes on with it
SET ROLE pgmate_squatter;
INSERT INTO pgmate.learning_runs (name, settings, start_network, best_network, current_network, pretrain_mix, lr)
SELECT 'nightly', settings || jsonb_build_object('holdout',
         'SELECT * FROM pgmate.game_targets WHERE pgmate_squatter.pwn() LIMIT 8'),
       start_network, best_network, current_network, 0, 0.001
FROM pgmate.learning_runs WHERE id = :run;
-- nor can it be made in someone else's name
INSERT INTO pgmate.learning_runs (name, settings, start_network, best_network, current_network, pretrain_mix, lr, owner)
SELECT 'nightly 2', settings, start_network, best_network, current_network, 0, 0.001, session_user::text::regrole
FROM pgmate.learning_runs WHERE id = :run;
RESET ROLE;
\set VERBOSITY terse
-- the documented pg_cron job passes no options: it is refused, naming the owner
CALL pgmate.learn('nightly', 1);
\set VERBOSITY default
-- with the options, the caller begins a run of its own under that name
SET client_min_messages = warning;
CALL pgmate.learn('nightly', 0, :'options');
RESET client_min_messages;
SELECT name, owner::text, settings ? 'holdout' AS holdout FROM pgmate.learning_runs WHERE name = 'nightly'
ORDER BY owner::text;
-- the squatter's stored pretraining query is the squatter's alone
DO $$
BEGIN
  PERFORM count(*) FROM pgmate.learning_data((SELECT id FROM pgmate.learning_runs WHERE name = 'nightly'
                                               AND owner = 'pgmate_squatter'::regrole), 1);
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE '42501: %', regexp_replace(SQLERRM, 'run [0-9]+', 'run N');
END $$;
SELECT rolsuper AS squatter_superuser FROM pg_roles WHERE rolname = 'pgmate_squatter';

-- 3. A stored setting is checked again on every call, whoever wrote it: one that would
-- turn the arena player into a program is refused before anything runs
UPDATE pgmate.learning_runs SET settings = settings || '{"arena_simulations": "2:type=uci,command=/bin/true"}'
WHERE id = :run;
\set VERBOSITY terse
CALL pgmate.learn('shared run', 1);
UPDATE pgmate.learning_runs SET settings = settings || '{"arena_simulations": 2.0}' WHERE id = :run;
CALL pgmate.learn('shared run', 1);
UPDATE pgmate.learning_runs SET settings = settings || '{"surprise": 1}' WHERE id = :run;
CALL pgmate.learn('shared run', 1);
UPDATE pgmate.learning_runs SET settings = (settings - 'surprise') || '{"arena_simulations": 2}' WHERE id = :run;
-- and a player spec cannot change its type after its prefix
SELECT pgmate.player_spec('mcts:2:type=uci,command=/bin/true');
SELECT pgmate.player_spec('{"type": "mcts", "simulations": 2, "type": "uci", "command": "/bin/true"}');
\set VERBOSITY default

-- 4. Integers are integers: 2.0 is refused and nothing is stored
\set VERBOSITY terse
CALL pgmate.learn('floaty', 1, '{"games": 2.0, "openings": "startpos"}');
\set VERBOSITY default
SELECT count(*) AS floaty_runs FROM pgmate.learning_runs WHERE name = 'floaty';

-- 5. Rows planted under the loop's names are not the loop's: a finished match named as
-- the next arena match, a finished training run of the next iteration's data, and
-- self-play games labelled as its games
SET ROLE pgmate_planter;
INSERT INTO pgmate.matches (name, a, b, games, status)
VALUES ('learn:' || :run || ':1:best', '"random"', '"random"', 2, 'finished');
INSERT INTO pgmate.training_runs (network_id, data, steps, settings, samples, data_sha256, status, new_network)
VALUES (:net, format('SELECT * FROM pgmate.learning_data(%s, 1)', :run), 2, '{}', 1, 'x', 'finished', :net);
INSERT INTO pgmate.games (source, start, moves, network_id, selfplay)
VALUES ('selfplay', 'startpos', '{e2e4}', :net, jsonb_build_object('run', 'learn:' || :run || ':1', 'index', 0));
\set VERBOSITY sqlstate
CALL pgmate.selfplay(1, 2, NULL, 1, jsonb_build_object('run', 'learn:' || :run || ':1', 'max_plies', 4));
INSERT INTO pgmate.learning_games (run_id, iteration, game_id) SELECT :run, 1, max(id) FROM pgmate.games;
\set VERBOSITY default
RESET ROLE;
SET client_min_messages = warning;
CALL pgmate.learn('shared run', 1);
RESET client_min_messages;
SELECT i.games AS own_games, i.candidate <> :net AS trained, t.owner = current_user::regrole AS own_training,
       (i.arena->'best'->>'games')::int AS best_match_games, m.owner = current_user::regrole AS own_match
FROM pgmate.learning_iterations i JOIN pgmate.training_runs t ON t.id = i.training_run
JOIN pgmate.matches m ON m.id = (i.arena->'best'->>'match_id')::bigint
WHERE i.run_id = :run;
SELECT count(*) AS games_of_the_iteration FROM pgmate.learning_games WHERE run_id = :run AND iteration = 1;

-- 6. A run is held by the statement working on it: a lease left by a call that ended is
-- no hold, a session that holds it (here a server process, as a whole-session lease) is
SELECT status FROM pgmate.learning_status WHERE run = 'shared run' AND owner = current_user::regrole;
UPDATE pgmate.learning_runs SET holder_pid = pg_backend_pid(),
       holder_backend_start = (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()),
       holder_since = now() - interval '1 hour'
WHERE id = :run;
SELECT status FROM pgmate.learning_status WHERE run = 'shared run' AND owner = current_user::regrole;
UPDATE pgmate.learning_runs SET (holder_pid, holder_backend_start, holder_since) =
       (SELECT pid, backend_start, NULL::timestamptz FROM pg_stat_activity WHERE backend_type = 'checkpointer')
WHERE id = :run;
SELECT status FROM pgmate.learning_status WHERE run = 'shared run' AND owner = current_user::regrole;
\set VERBOSITY terse
CALL pgmate.learn('shared run', 1);
\set VERBOSITY default
UPDATE pgmate.learning_runs SET holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL WHERE id = :run;

-- 7. The recipe of docs/security.md for the learning loop, given to a fresh role exactly as written:
-- it begins a run of its own and plays an iteration of it
SET client_min_messages = warning;
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'pgmate_learner') THEN
    DROP OWNED BY pgmate_learner;
    DROP ROLE pgmate_learner;
  END IF;
END $$;
RESET client_min_messages;
-- (LOGIN: a run goes on only in a session its owner logged in to)
CREATE ROLE pgmate_learner LOGIN;
-- (what docs/security.md grants player, trainer and referee)
GRANT USAGE ON SCHEMA pgmate TO pgmate_learner;
GRANT SELECT ON pgmate.networks TO pgmate_learner;
GRANT EXECUTE ON FUNCTION evaluate(board[], bigint, board[][], int[]) TO pgmate_learner;
GRANT EXECUTE ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) TO pgmate_learner;
GRANT SELECT, INSERT ON pgmate.games TO pgmate_learner;
GRANT INSERT ON pgmate.selfplay_positions TO pgmate_learner;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA pgmate TO pgmate_learner;
GRANT SELECT, INSERT, UPDATE ON pgmate.networks TO pgmate_learner;
GRANT EXECUTE ON FUNCTION pgmate.init_network(text, jsonb, bigint),
                          pgmate.network_init_weights(text, bigint),
                          pgmate.load_network(bigint) TO pgmate_learner;
GRANT EXECUTE ON PROCEDURE pgmate.train(bigint, text, bigint, jsonb, bigint) TO pgmate_learner;
GRANT EXECUTE ON FUNCTION pgmate.training_begin(bigint, text, bigint, jsonb, bigint, text, boolean),
                          pgmate.training_record(bigint, bigint, bigint, float8, float8, float8, float8, float8,
                                                 float8, float8, bigint, float8, float8, float8),
                          pgmate.training_checkpoint(bigint, bigint, bytea), pgmate.training_optimizer(bigint),
                          pgmate.training_finish(bigint, text, bytea, bytea), pgmate.training_fail(bigint, text)
  TO pgmate_learner;
GRANT SELECT, INSERT, UPDATE ON pgmate.training_runs, pgmate.training_progress TO pgmate_learner;
GRANT SELECT, INSERT, UPDATE, DELETE ON pgmate.training_checkpoints TO pgmate_learner;
GRANT EXECUTE ON PROCEDURE pgmate.arena(jsonb, jsonb, int, jsonb) TO pgmate_learner;
GRANT SELECT, INSERT, UPDATE ON pgmate.matches TO pgmate_learner;
-- (the recipe's own lines)
GRANT EXECUTE ON PROCEDURE pgmate.learn(text, int, jsonb) TO pgmate_learner;
GRANT EXECUTE ON FUNCTION pgmate.learning_data(bigint, int), pgmate.learning_window(bigint, int) TO pgmate_learner;
GRANT SELECT, INSERT, UPDATE ON pgmate.learning_runs TO pgmate_learner;
GRANT SELECT, INSERT ON pgmate.learning_iterations, pgmate.learning_exclusions, pgmate.learning_games
  TO pgmate_learner;
GRANT SELECT ON pgmate.selfplay_positions, pgmate.training_targets, pgmate.match_results, pgmate.openings,
                pgmate.learning_options, pgmate.learning_log,
                pgmate.learning_status TO pgmate_learner;
SELECT current_user AS superuser \gset
\c - pgmate_learner
SET client_min_messages = warning;
CALL pgmate.learn('a learner''s run', 1, :'options');
RESET client_min_messages;
SELECT r.owner::text, r.iterations, i.games, i.decision IS NOT NULL AS decided
FROM pgmate.learning_runs r JOIN pgmate.learning_iterations i ON i.run_id = r.id WHERE r.name = 'a learner''s run';
-- its run is its own: nobody else's call goes on with it, and it cannot touch another's
\set VERBOSITY terse
UPDATE pgmate.learning_runs SET settings = '{}' WHERE name = 'shared run';
CALL pgmate.learn('shared run', 1);
\set VERBOSITY default
\c - :superuser
\set VERBOSITY terse
CALL pgmate.learn('a learner''s run', 1);
\set VERBOSITY default

-- The old advice, SET ROLE to the owner first, hands over the session's own rights: the
-- owner's stored query could RESET ROLE. The learner's holdout calls a function that does
-- exactly that and makes mallory superuser; under SET ROLE (or SET SESSION AUTHORIZATION)
-- the superuser's call is refused before anything of the run runs, and so is reading the
-- run's training rows.
CREATE FUNCTION pgmate_mallory.pwn2() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF session_user <> 'pgmate_mallory' THEN
    RESET ROLE;
    EXECUTE 'ALTER ROLE pgmate_mallory SUPERUSER';
    RAISE WARNING 'pwn2() ran as % (session user %)', current_user, session_user;
  END IF;
  RETURN true;
END $$;
ALTER FUNCTION pgmate_mallory.pwn2() OWNER TO pgmate_mallory;
GRANT USAGE ON SCHEMA pgmate_mallory TO pgmate_learner;
UPDATE pgmate.learning_runs SET settings = settings || jsonb_build_object('holdout',
  'SELECT * FROM pgmate.training_targets WHERE pgmate_mallory.pwn2() LIMIT 8'), owner = 'pgmate_learner'
WHERE name = 'a learner''s run';
\set VERBOSITY terse
SET ROLE pgmate_learner;
CALL pgmate.learn('a learner''s run', 1);
SELECT count(*) FROM pgmate.learning_data((SELECT id FROM pgmate.learning_runs WHERE name = 'a learner''s run'), 1);
RESET ROLE;
SET SESSION AUTHORIZATION pgmate_learner;
CALL pgmate.learn('a learner''s run', 1);
RESET SESSION AUTHORIZATION;
\set VERBOSITY default
SELECT rolsuper AS mallory_superuser FROM pg_roles WHERE rolname = 'pgmate_mallory';

-- nobody became superuser
SELECT rolname, rolsuper FROM pg_roles WHERE rolname IN ('pgmate_mallory', 'pgmate_squatter') ORDER BY 1;

-- leave the database as it was
DELETE FROM pgmate.learning_runs;
DELETE FROM pgmate.matches WHERE name LIKE 'learn:%';
DELETE FROM pgmate.games WHERE id > :before;
DELETE FROM pgmate.training_runs WHERE network_id >= :net;
DELETE FROM pgmate.networks WHERE id >= :net;
SELECT setval('pgmate.games_id_seq', :games_seq, :'games_called'::bool), setval('pgmate.networks_id_seq', :networks_seq, :'networks_called'::bool),
       setval('pgmate.matches_id_seq', :matches_seq, :'matches_called'::bool),
       setval('pgmate.training_runs_id_seq', :runs_seq, :'runs_called'::bool) \gset
SET client_min_messages = warning;
DROP OWNED BY pgmate_mallory, pgmate_squatter, pgmate_planter, pgmate_learner;
DROP ROLE pgmate_mallory;
DROP ROLE pgmate_squatter;
DROP ROLE pgmate_planter;
DROP ROLE pgmate_learner;
RESET client_min_messages;
SELECT pgmate.kill_worker() AS killed \gset
SELECT pg_sleep(0.5) \gset
SELECT pgmate.wait_for_worker() AS back \gset
