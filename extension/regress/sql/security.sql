-- Who may use the shared worker and its networks, and what a network is.
--  * The functions that make pgmate-worker allocate or compute on a large scale are not
--    executable by PUBLIC; evaluate() reads the network's row as the caller on every call.
--  * Weights are data: anything but pgmate's safetensors is refused, and nothing in a row
--    ever runs (a LibTorch archive is never opened).
--  * A network is (database, id, SHA-256 of its weights): a changed row is loaded anew, and
--    another database's network with the same id is never served.
--  * Limits hold before anything is allocated.
SELECT pgmate.wait_for_worker();
SELECT current_database() AS home \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS pgmate_security_other;
DROP ROLE IF EXISTS pgmate_stranger;
DROP ROLE IF EXISTS pgmate_player;
RESET client_min_messages;
CREATE ROLE pgmate_stranger;
CREATE ROLE pgmate_player;
-- What docs/security.md grants a role that evaluates networks and plays self-play with them.
GRANT USAGE ON SCHEMA pgmate TO pgmate_player;
GRANT SELECT ON pgmate.networks TO pgmate_player;
GRANT EXECUTE ON FUNCTION evaluate(board[], bigint, board[][], int[]) TO pgmate_player;

SELECT pgmate.init_network('security', '{"filters": 8, "blocks": 1, "attention_blocks": 0}', seed => 1) AS id \gset

-- PUBLIC may run none of these
SELECT p.oid::regprocedure AS routine, has_function_privilege('pgmate_stranger', p.oid, 'EXECUTE') AS public_may
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  WHERE p.proname IN ('evaluate', 'network_init_weights', 'init_network', 'load_network', 'legal_moves_batch',
                      'selfplay', 'kill_worker')
  ORDER BY p.oid::regprocedure::text;
-- and these stay open: the backend's own work, and the worker's status
SELECT has_function_privilege('pgmate_stranger', 'worker_status()', 'EXECUTE') AS status,
       has_function_privilege('pgmate_stranger', 'perft(board, int, text)', 'EXECUTE') AS perft;

SET pgmate.worker_checkers_perft_max_depth = 6;  -- a superuser's setting, kept under SET ROLE
SET ROLE pgmate_stranger;
\set VERBOSITY terse
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], :id);
SELECT pgmate.network_init_weights('{}', 1);
SELECT pgmate.load_network(:id);
CALL pgmate.selfplay(1, 2);
SELECT count(*) FROM legal_moves_batch(ARRAY['startpos'::board]);
-- perft on the shared worker is bounded by a setting only a superuser may raise
SELECT perft('startpos', 11, device => 'worker');
SELECT perft('startpos'::checkers_board, 7, device => 'worker');
SET pgmate.worker_perft_max_depth = 20;
SELECT perft('startpos', 3, device => 'worker') AS shallow_is_fine;
-- the status lists this database's networks only
SELECT count(*) AS other_databases
  FROM jsonb_array_elements(worker_status()->'networks') n
  WHERE (n->>'database')::oid <> (SELECT oid FROM pg_database WHERE datname = current_database());
\set VERBOSITY default
RESET ROLE;
RESET pgmate.worker_checkers_perft_max_depth;

-- The player evaluates the networks it may read, and only while it may read them: the
-- privilege is checked on every call, not only when the worker loads the network.
SET ROLE pgmate_player;
SELECT count(*) AS rows FROM evaluate(ARRAY['startpos'::board], :id);
RESET ROLE;
REVOKE SELECT ON pgmate.networks FROM pgmate_player;
SET ROLE pgmate_player;
\set VERBOSITY terse
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], :id);
\set VERBOSITY default
RESET ROLE;
GRANT SELECT ON pgmate.networks TO pgmate_player;

-- A network must be named, and exist.
\set VERBOSITY terse
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], NULL);
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], 0);
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], 987654321);
\set VERBOSITY default

-- evaluate() says which network answered, and a changed row is a new network.
SELECT network_id = :id AS id_reported,
       weights_sha256 = (SELECT weights_sha256 FROM pgmate.networks WHERE id = :id) AS version_reported,
       length(weights_sha256) AS hash_bytes
  FROM evaluate(ARRAY['startpos'::board], :id);
SELECT win AS win_before, weights_sha256 AS sha_before FROM evaluate(ARRAY['startpos'::board], :id) \gset
UPDATE pgmate.networks SET weights = pgmate.network_init_weights(config::text, 2) WHERE id = :id;
SELECT win <> :'win_before'::real AS new_answer, weights_sha256 <> :'sha_before' AS new_version,
       weights_sha256 = (SELECT sha256(weights) FROM pgmate.networks WHERE id = :id) AS the_rows_weights
  FROM evaluate(ARRAY['startpos'::board], :id);
-- both versions are held (the old one goes when memory is needed); the row's own is served
SELECT count(*) AS versions_held
  FROM jsonb_array_elements(worker_status()->'networks') n
  WHERE (n->>'id')::bigint = :id
    AND (n->>'database')::oid = (SELECT oid FROM pg_database WHERE datname = current_database());

-- Weights are data, never code: a LibTorch archive (the format of pgmate 0.3, which runs
-- code when loaded) is refused unopened; so are bytes that are not pgmate's safetensors.
INSERT INTO pgmate.networks (name, config, weights)
VALUES ('archive', '{"filters": 8, "blocks": 1, "attention_blocks": 0}',
        '\x504b0304140000000800000021000000000000000000000000000a000000617263686976652f'::bytea),
       ('header too long', '{"filters": 8, "blocks": 1, "attention_blocks": 0}',
        '\xffffffffffffff7f7b7d'::bytea),
       ('not json', '{"filters": 8, "blocks": 1, "attention_blocks": 0}',
        '\x08000000000000007b2261223a317d20'::bytea),
       ('other configuration', '{"filters": 16, "blocks": 1, "attention_blocks": 0}',
        pgmate.network_init_weights('{"filters": 8, "blocks": 1, "attention_blocks": 0}', 3));
\set VERBOSITY terse
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], (SELECT id FROM pgmate.networks WHERE name = 'archive'));
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], (SELECT id FROM pgmate.networks WHERE name = 'header too long'));
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], (SELECT id FROM pgmate.networks WHERE name = 'not json'));
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], (SELECT id FROM pgmate.networks WHERE name = 'other configuration'));
\set VERBOSITY default
DELETE FROM pgmate.networks WHERE name IN ('archive', 'header too long', 'not json', 'other configuration');

-- Limits before allocation: a network too large for the worker, a self-play run too large
-- for this backend, arguments beyond the options' bounds.
\set VERBOSITY terse
SELECT pgmate.network_init_weights('{"filters": 1024, "blocks": 64}', 1);
CALL pgmate.selfplay(1, 1000000000);
CALL pgmate.selfplay(2000000000, 1);
CALL pgmate.selfplay(1, 1, NULL, 1000000);
CALL pgmate.selfplay(1000, 100000, NULL, 1000);
\set VERBOSITY default
-- setting up many games at once can be cancelled
SET statement_timeout = '100ms';
\set VERBOSITY sqlstate
CALL pgmate.selfplay(100000, 2, NULL, 20000, '{"cache_entries": 0}');
\set VERBOSITY default
RESET statement_timeout;

-- Two databases, each with a network of the same id: each is served its own.
SELECT win AS home_win FROM evaluate(ARRAY['startpos'::board], :id) \gset
CREATE DATABASE pgmate_security_other;
\c pgmate_security_other
SET client_min_messages = warning;
CREATE EXTENSION pgmate;
RESET client_min_messages;
INSERT INTO pgmate.networks (id, name, config, weights)
VALUES (:id, 'same id, other database', '{"filters": 8, "blocks": 1, "attention_blocks": 0}',
        pgmate.network_init_weights('{"filters": 8, "blocks": 1, "attention_blocks": 0}', 77));
SELECT win <> :'home_win'::real AS own_network, network_id = :id AS same_id FROM evaluate(ARRAY['startpos'::board], :id);
-- a superuser's status shows both databases' networks; another role's only its own
SELECT count(DISTINCT n->>'database') >= 2 AS superuser_sees_both
  FROM jsonb_array_elements(worker_status()->'networks') n WHERE (n->>'id')::bigint = :id;
SET ROLE pgmate_player;
SELECT count(*) AS player_sees_other_databases
  FROM jsonb_array_elements(worker_status()->'networks') n
  WHERE (n->>'database')::oid <> (SELECT oid FROM pg_database WHERE datname = current_database());
RESET ROLE;
\c :home
SELECT win = :'home_win'::real AS still_its_own FROM evaluate(ARRAY['startpos'::board], :id);

SET client_min_messages = warning;
DROP DATABASE pgmate_security_other;
DELETE FROM pgmate.networks WHERE id = :id;
REVOKE ALL ON SCHEMA pgmate FROM pgmate_player;
REVOKE ALL ON pgmate.networks FROM pgmate_player;
REVOKE ALL ON FUNCTION evaluate(board[], bigint, board[][], int[]) FROM pgmate_player;
DROP ROLE pgmate_player;
DROP ROLE pgmate_stranger;
RESET client_min_messages;
