-- A database made with pgmate 0.1.0 upgrades in place (ALTER EXTENSION pgmate UPDATE goes
-- through every version to the latest): its games stay, and the upgraded extension has
-- exactly the objects of a fresh install.
--
-- Each snapshot is a temporary SQL function, taken once on the fresh install and once after the
-- upgrade: its body is planned at each call, so the names it casts to regclass find the objects of
-- the extension installed then.
CREATE FUNCTION pg_temp.extension_objects() RETURNS TABLE (object text) LANGUAGE sql AS $$
  SELECT pg_describe_object(classid, objid, objsubid)
  FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate')
$$;
-- what pg_depend does not show: the type flags that steer overload resolution
CREATE FUNCTION pg_temp.extension_types() RETURNS TABLE (typname name, typcategory "char", typispreferred boolean)
LANGUAGE sql AS $$
  SELECT typname, typcategory, typispreferred FROM pg_type
  WHERE typname IN ('board', 'move', 'checkers_board', 'checkers_move')
$$;
-- and what pg_depend does not show either: who may run what, the columns of the tables and views
-- that changed, and the constraints of the tables that changed
CREATE FUNCTION pg_temp.extension_acls() RETURNS TABLE (routine text, acl text) LANGUAGE sql AS $$
  SELECT p.oid::regprocedure::text, coalesce(p.proacl::text, 'default')
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate')
$$;
CREATE FUNCTION pg_temp.extension_checks() RETURNS TABLE (conname name, definition text) LANGUAGE sql AS $$
  SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint
  WHERE conrelid IN ('pgmate.selfplay_positions'::regclass, 'pgmate.games'::regclass, 'pgmate.matches'::regclass,
                    'pgmate.training_runs'::regclass, 'pgmate.training_checkpoints'::regclass,
                    'pgmate.learning_runs'::regclass, 'pgmate.learning_iterations'::regclass,
                    'pgmate.learning_exclusions'::regclass, 'pgmate.learning_games'::regclass,
                    'pgmate.position_runs'::regclass,
                    'pgmate.position_blocks'::regclass, 'pgmate.position_evals'::regclass)
    AND (contype IN ('c', 'f', 'u') OR contype = 'p' AND conrelid = 'pgmate.position_evals'::regclass)
$$;
-- and what an upgrade script could forget to replace: the body of every routine and the
-- query of every view
CREATE FUNCTION pg_temp.extension_sources() RETURNS TABLE (object text, source text) LANGUAGE sql AS $$
  SELECT pg_describe_object(d.classid, d.objid, 0),
         md5(CASE WHEN d.classid = 'pg_proc'::regclass
                  THEN (SELECT p.prosrc || coalesce(p.proconfig::text, '') FROM pg_proc p WHERE p.oid = d.objid)
                  ELSE pg_get_viewdef(d.objid) END)
  FROM pg_depend d
  WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
    AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate')
    AND (d.classid = 'pg_proc'::regclass
         OR d.classid = 'pg_class'::regclass AND (SELECT c.relkind FROM pg_class c WHERE c.oid = d.objid) = 'v')
$$;
-- row-level security: which tables have it, and their policies
CREATE FUNCTION pg_temp.extension_policies()
RETURNS TABLE (relation text, rls boolean, policy text, command text, using_expr text, check_expr text)
LANGUAGE sql AS $$
  SELECT c.relname::text, c.relrowsecurity, p.polname::text, p.polcmd::text,
         pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid)
  FROM pg_class c LEFT JOIN pg_policy p ON p.polrelid = c.oid
  WHERE c.relnamespace = 'pgmate'::regnamespace AND c.relkind = 'r'
$$;
CREATE FUNCTION pg_temp.extension_triggers() RETURNS TABLE (tgname name, definition text) LANGUAGE sql AS $$
  SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger
  WHERE tgrelid IN ('pgmate.games'::regclass, 'pgmate.position_evals'::regclass) AND NOT tgisinternal
$$;
CREATE FUNCTION pg_temp.extension_columns()
RETURNS TABLE (relation text, "position" bigint, attname name, type text, attgenerated "char", expression text)
LANGUAGE sql AS $$
  SELECT attrelid::regclass::text,
         row_number() OVER (PARTITION BY attrelid ORDER BY attnum), attname, atttypid::regtype::text, attgenerated,
         pg_get_expr(adbin, adrelid)
  FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
  WHERE attrelid IN ('pgmate.networks'::regclass, 'pgmate.selfplay_positions'::regclass,
                     'pgmate.training_targets'::regclass, 'pgmate.games'::regclass, 'pgmate.matches'::regclass,
                     'pgmate.match_results'::regclass, 'pgmate.training_log'::regclass,
                     'pgmate.learning_runs'::regclass, 'pgmate.learning_iterations'::regclass,
                     'pgmate.learning_log'::regclass, 'pgmate.learning_options'::regclass,
                     'pgmate.training_runs'::regclass, 'pgmate.learning_games'::regclass,
                     'pgmate.learning_status'::regclass,
                     'pgmate.position_runs'::regclass, 'pgmate.position_blocks'::regclass,
                     'pgmate.position_staged_blocks'::regclass, 'pgmate.position_index_size'::regclass,
                     'pgmate.position_evals'::regclass, 'pgmate.visible_evals'::regclass, 'pgmate.move_evals'::regclass,
                     'pgmate.game_accuracy'::regclass, 'pgmate.eval_targets'::regclass)
    AND attnum > 0 AND NOT attisdropped
$$;
CREATE TEMP TABLE fresh_objects AS SELECT * FROM pg_temp.extension_objects();
SELECT count(*) > 100 AS many_objects FROM fresh_objects;
CREATE TEMP TABLE fresh_types AS SELECT * FROM pg_temp.extension_types();
CREATE TEMP TABLE fresh_acls AS SELECT * FROM pg_temp.extension_acls();
CREATE TEMP TABLE fresh_checks AS SELECT * FROM pg_temp.extension_checks();
CREATE TEMP TABLE fresh_sources AS SELECT * FROM pg_temp.extension_sources();
CREATE TEMP TABLE fresh_policies AS SELECT * FROM pg_temp.extension_policies();
CREATE TEMP TABLE fresh_triggers AS SELECT * FROM pg_temp.extension_triggers();
CREATE TEMP TABLE fresh_columns AS SELECT * FROM pg_temp.extension_columns();

SET client_min_messages = warning;
DROP EXTENSION pgmate CASCADE;
RESET client_min_messages;
CREATE EXTENSION pgmate VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'pgmate';
INSERT INTO pgmate.games (white, black, result, moves) VALUES ('old', 'game', '1-0', '{f2f3,e7e5,g2g4,d8h4}');
-- weights of pgmate 0.3 and before: a LibTorch archive (a ZIP file), never loaded again
INSERT INTO pgmate.networks (name, weights, notes)
VALUES ('old archive', '\x504b03040a0000000000'::bytea, 'from 0.1.0');
-- networks named by a preset: weights whose metadata says what tiny was (two attention
-- blocks; only the header is needed here), and bytes that are not weights at all
INSERT INTO pgmate.networks (name, config, weights, notes)
SELECT 'old tiny', '{"preset": "tiny"}', set_byte('\x0000000000000000'::bytea, 0, length(header)) || header, 'from 0.1.0'
FROM (SELECT convert_to('{"__metadata__":{"pgmate_config":"{\"filters\":16,\"blocks\":2,\"attention_blocks\":2,'
                        || '\"heads\":4,\"se_ratio\":8,\"policy_head\":\"conv\"}"}}', 'UTF8') AS header) h;
INSERT INTO pgmate.networks (name, config, weights, notes)
VALUES ('old bytes', '{"preset": "tiny"}', '\x00'::bytea, 'from 0.1.0');

-- evaluations stored before they had a writer: an honest one and one no check refused then
ALTER EXTENSION pgmate UPDATE TO '0.13.0';
INSERT INTO pgmate.position_evals (key, position, engine, limits, score_cp, win, draw, loss, wdl_source, best_move, pv, lines)
SELECT board_key(b), without_clocks(b), 'Old engine', c.limits, c.cp, 500, 0, 500, 'engine', c.best::move, c.pv::move[], c.lines::jsonb
FROM (SELECT play('startpos', '{f2f4,e7e6}'::move[]) AS b) s,
     (VALUES ('nodes=1', 10, 'g1f3', '{g1f3,d7d5}', NULL),
             ('nodes=2', 20000000, 'e2e5', '{e2e5,a7a1}', '{"not": "an array"}')) c(limits, cp, best, pv, lines);
ALTER EXTENSION pgmate UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgmate';
-- the honest one is the extension owner's, as every session read it; the forged one is
-- kept, but no role's: no view reads it
SELECT limits, best_move, writer = (SELECT extowner FROM pg_extension WHERE extname = 'pgmate')::regrole AS owners,
       writer::oid = 0 AS nobodys
  FROM pgmate.position_evals WHERE engine = 'Old engine' ORDER BY limits;
SELECT limits FROM pgmate.visible_evals WHERE engine = 'Old engine';
DELETE FROM pgmate.position_evals WHERE engine = 'Old engine';
SELECT white, black, moves, status(play(start, moves)) FROM pgmate.games;

CREATE TEMP TABLE upgraded_objects AS SELECT * FROM pg_temp.extension_objects();
SELECT 'only in a fresh install' AS where, object FROM (TABLE fresh_objects EXCEPT TABLE upgraded_objects) f
UNION ALL
SELECT 'only after the upgrade', object FROM (TABLE upgraded_objects EXCEPT TABLE fresh_objects) u;
SELECT t.typname, t.typcategory, t.typispreferred, f.typispreferred = t.typispreferred AS as_fresh
  FROM pg_temp.extension_types() t JOIN fresh_types f USING (typname) ORDER BY t.typname;
SELECT 'fresh' AS install, * FROM (TABLE fresh_acls EXCEPT SELECT * FROM pg_temp.extension_acls()) f
UNION ALL
SELECT 'upgraded', * FROM (SELECT * FROM pg_temp.extension_acls() EXCEPT TABLE fresh_acls) u;
SELECT 'fresh' AS install, * FROM (TABLE fresh_columns EXCEPT SELECT * FROM pg_temp.extension_columns()) f
UNION ALL
SELECT 'upgraded', * FROM (SELECT * FROM pg_temp.extension_columns() EXCEPT TABLE fresh_columns) u;
SELECT conname, c.definition = f.definition AS as_fresh
  FROM pg_temp.extension_checks() c JOIN fresh_checks f USING (conname)
  ORDER BY conname;
SELECT tgname, t.definition = f.definition AS as_fresh
  FROM pg_temp.extension_triggers() t FULL JOIN fresh_triggers f USING (tgname)
  ORDER BY tgname;
SELECT 'fresh' AS install, * FROM (TABLE fresh_sources EXCEPT SELECT * FROM pg_temp.extension_sources()) f
ORDER BY object;
SELECT 'fresh' AS install, * FROM (TABLE fresh_policies EXCEPT SELECT * FROM pg_temp.extension_policies()) f
UNION ALL
SELECT 'upgraded', * FROM (SELECT * FROM pg_temp.extension_policies() EXCEPT TABLE fresh_policies) u;
-- the games stored before are in the position index the upgrade built
SELECT pgmate.position_count(play('startpos', '{f2f3,e7e5}'::move[])) AS indexed_by_the_upgrade;
-- the old network is marked, hashed, and refused without being opened
SELECT name, notes, weights_sha256 = sha256(weights) AS hashed FROM pgmate.networks WHERE name = 'old archive';
-- a network named by a preset keeps the configuration its weights were made for
SELECT name, config FROM pgmate.networks WHERE name LIKE 'old %' ORDER BY id;
SELECT pgmate.wait_for_worker();
\set VERBOSITY terse
SELECT count(*) FROM evaluate(ARRAY['startpos'::board], (SELECT id FROM pgmate.networks WHERE name = 'old archive'));
\set VERBOSITY default
DELETE FROM pgmate.networks;

-- the new features work on the upgraded database; untyped literals still mean chess
SELECT perft('startpos', 3) AS chess, perft('startpos'::checkers_board, 3) AS checkers,
       play('startpos'::checkers_board, '11-15') AS checkers_after_11_15;
\set VERBOSITY terse
CALL pgmate.selfplay(1, 4, options => '{"seed": 1, "max_plies": 4, "run": "upgrade-test"}');
\set VERBOSITY default
SELECT count(*) AS games, sum(ply_count) AS plies FROM pgmate.games WHERE source = 'selfplay';
SELECT count(*) AS positions FROM pgmate.selfplay_positions;
DELETE FROM pgmate.games;
