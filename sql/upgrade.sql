-- A database made with pgmate 0.1.0 upgrades in place (ALTER EXTENSION pgmate UPDATE goes
-- through every version to the latest): its games stay, and the upgraded extension has
-- exactly the objects of a fresh install.
CREATE TEMP TABLE fresh_objects AS
  SELECT pg_describe_object(classid, objid, objsubid) AS object
  FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate');
SELECT count(*) > 100 AS many_objects FROM fresh_objects;
-- what pg_depend does not show: the type flags that steer overload resolution
CREATE TEMP TABLE fresh_types AS
  SELECT typname, typcategory, typispreferred FROM pg_type
  WHERE typname IN ('board', 'move', 'checkers_board', 'checkers_move');

SET client_min_messages = warning;
DROP EXTENSION pgmate CASCADE;
RESET client_min_messages;
CREATE EXTENSION pgmate VERSION '0.1.0';
SELECT extversion FROM pg_extension WHERE extname = 'pgmate';
INSERT INTO pgmate.games (white, black, result, moves) VALUES ('old', 'game', '1-0', '{f2f3,e7e5,g2g4,d8h4}');

ALTER EXTENSION pgmate UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'pgmate';
SELECT white, black, moves, status(play(start, moves)) FROM pgmate.games;

CREATE TEMP TABLE upgraded_objects AS
  SELECT pg_describe_object(classid, objid, objsubid) AS object
  FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate');
SELECT 'only in a fresh install' AS where, object FROM (TABLE fresh_objects EXCEPT TABLE upgraded_objects) f
UNION ALL
SELECT 'only after the upgrade', object FROM (TABLE upgraded_objects EXCEPT TABLE fresh_objects) u;
SELECT t.typname, t.typcategory, t.typispreferred, f.typispreferred = t.typispreferred AS as_fresh
  FROM pg_type t JOIN fresh_types f USING (typname) ORDER BY t.typname;

-- the new features work on the upgraded database; untyped literals still mean chess
SELECT perft('startpos', 3) AS chess, perft('startpos'::checkers_board, 3) AS checkers,
       play('startpos'::checkers_board, '11-15') AS checkers_after_11_15;
\set VERBOSITY terse
CALL pgmate.selfplay(1, 4, options => '{"seed": 1, "max_plies": 4, "run": "upgrade-test"}');
\set VERBOSITY default
SELECT count(*) AS games, sum(ply_count) AS plies FROM pgmate.games WHERE source = 'selfplay';
SELECT count(*) AS positions FROM pgmate.selfplay_positions;
DELETE FROM pgmate.games;
