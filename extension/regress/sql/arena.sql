-- The arena: player specs, statistics against hand-computed values, matches played by
-- CALL pgmate.arena (resumed by name, refused when the players differ), the results view,
-- ratings, UCI players (Stockfish; privileges), cancel keeping whole games.

-- specs: shorthand and JSON resolve to the same stored form
SELECT pgmate.player_spec('mcts:200') = pgmate.player_spec('{"type": "mcts", "simulations": 200}') AS same;
SELECT pgmate.player_spec('random');
SELECT pgmate.player_spec('net:3:1');
SELECT pgmate.player_spec('uci:/usr/games/stockfish:nodes=1000,Skill Level=0');
\set VERBOSITY terse
SELECT pgmate.player_spec('mcts:many');
SELECT pgmate.player_spec('uci:sf:Hash');
SELECT pgmate.player_spec('{"type": "mcts", "simulations": 10, "depth": 3}');
SELECT pgmate.player_spec('alphazero');
\set VERBOSITY default

-- Elo: 60 wins and 40 losses is a score of 0.6, 70.4 Elo; LOS = Phi(20 / 10) = 0.977
SELECT games, score, round(elo::numeric, 2) AS elo, round(elo_lower::numeric, 2) AS lower,
       round(elo_upper::numeric, 2) AS upper, round(los::numeric, 4) AS los
  FROM pgmate.elo(60, 0, 40);
SELECT elo, elo_lower, elo_upper FROM pgmate.elo(10, 0, 0);   -- all wins: +Infinity
SELECT games, score, elo FROM pgmate.elo(0, 0, 0);            -- nothing known
-- pairs: 2 LL, 8 LD, 20 DD/WL, 12 WD, 8 WW
SELECT games, round(score::numeric, 4) AS score, round(elo::numeric, 2) AS elo,
       round(elo_lower::numeric, 2) AS lower, round(elo_upper::numeric, 2) AS upper
  FROM pgmate.pentanomial_elo(2, 8, 20, 12, 8);
-- fishtest test 60428c84ddcba5f0627bb6e4: pentanomial 61, 1226, 6644, 1387, 50 at {-0.25, 1.25}: LLR 2.96
SELECT round(llr::numeric, 2) AS llr, round(lower_bound::numeric, 3) AS lower, round(upper_bound::numeric, 3) AS upper,
       verdict
  FROM pgmate.sprt(61, 1226, 6644, 1387, 50, -0.25, 1.25);
SELECT verdict FROM pgmate.sprt(0, 0, 0, 0, 40, 0, 10);
\set VERBOSITY terse
SELECT * FROM pgmate.elo(-1, 0, 0);
SELECT * FROM pgmate.sprt(1, 1, 1, 1, 1, 5, 0);
\set VERBOSITY default

-- a match in the backend: pure MCTS against random, 4 games in 2 pairs
CALL pgmate.arena('"mcts:50"', '"random"', 4, '{"name": "mcts-random", "seed": 1, "max_plies": 200, "parallel": 4}');
SELECT name, a->>'type' AS a, b->>'type' AS b, games, status, options->>'seed' AS seed FROM pgmate.matches;
SELECT count(*) AS games,
       count(*) FILTER (WHERE (arena->>'a_white')::bool) AS a_white,
       count(DISTINCT arena->>'pair') AS pairs,
       bool_and(white = CASE WHEN (arena->>'a_white')::bool THEN 'mcts:50' ELSE 'random' END) AS names,
       bool_and(tags->>'WhiteSpec' IS NOT NULL) AS specs_in_tags
  FROM pgmate.games WHERE source = 'arena';
SELECT games, wins + draws + losses = games AS counted, ll + ld + dd_wl + wd + ww AS pairs, elo_model,
       score BETWEEN 0 AND 1 AS score_ok, elo_lower <= elo AND elo <= elo_upper AS interval_ok, llr
  FROM pgmate.match_results WHERE name = 'mcts-random';
-- a game exports as PGN with the players' specs
SELECT to_pgn(g) ~ '\[WhiteSpec "\{' AS spec_tag FROM pgmate.games g WHERE source = 'arena' LIMIT 1;
-- the same name again resumes: 2 more games, the first 4 kept
CALL pgmate.arena('"mcts:50"', '"random"', 6, '{"name": "mcts-random", "seed": 1, "max_plies": 200, "parallel": 4}');
SELECT games, status FROM pgmate.matches WHERE name = 'mcts-random';
SELECT count(*) AS games, count(DISTINCT arena->>'index') AS distinct_indexes FROM pgmate.games WHERE source = 'arena';
-- ... but not with other players or options
\set VERBOSITY terse
CALL pgmate.arena('"mcts:30"', '"random"', 6, '{"name": "mcts-random", "seed": 1, "max_plies": 200, "parallel": 4}');
CALL pgmate.arena('"mcts:50"', '"random"', 6, '{"name": "mcts-random", "seed": 2, "max_plies": 200, "parallel": 4}');
CALL pgmate.arena('"mcts:20"', '"random"', 2, '{"openings": "/etc/passwd"}');
CALL pgmate.arena('"mcts:20"', '"random"', 2, '{"parallel": 0}');
CALL pgmate.arena('"mcts:20"', '"random"', 2, '{"games": 3}');
CALL pgmate.arena('"mcts:20"', '[1]', 2);
CALL pgmate.arena('"net:999999:5"', '"random"', 2);
\set VERBOSITY default

-- Stockfish as a UCI player, and the ratings over every match (random anchored at 0)
CALL pgmate.arena('"uci:/usr/games/stockfish:nodes=500"', '"random"', 2,
                  '{"name": "stockfish-random", "seed": 3, "max_plies": 300, "parallel": 1}');  -- notices in game order
SELECT wins, draws, losses FROM pgmate.match_results WHERE name = 'stockfish-random';
-- (a player against itself leaves the ratings as they were)
CALL pgmate.arena('"random"', '"random"', 2, '{"name": "random-random", "seed": 4, "max_plies": 40}');
SELECT name, CASE WHEN elo = 'Infinity' THEN 'infinity' WHEN elo > 0 THEN 'above random' WHEN elo = 0 THEN 'anchor'
                  ELSE 'below random' END AS rating, games
  FROM pgmate.ratings('"random"') ORDER BY name;
\set VERBOSITY terse
SELECT * FROM pgmate.ratings('"mcts:999"');
\set VERBOSITY default

-- a network with search against random: its leaves go to pgmate-worker in batches
SELECT pgmate.wait_for_worker();
SELECT pgmate.init_network('arena', '{"filters": 8, "blocks": 1, "attention_blocks": 0}', seed => 3) AS net \gset
CALL pgmate.arena(format('"net:%s:8"', :net)::jsonb, '"random"', 2, '{"name": "net-random", "seed": 1, "max_plies": 30}');
SELECT games, wins + draws + losses AS counted FROM pgmate.match_results WHERE name = 'net-random';
SELECT white ~ '^net:[0-9]+:8$' OR black ~ '^net:[0-9]+:8$' AS net_named FROM pgmate.games g
  JOIN pgmate.matches m ON m.id = g.match_id WHERE m.name = 'net-random' LIMIT 1;

-- a uci player runs a program on the server: not for ordinary roles
CREATE ROLE pgmate_arena_player;
GRANT USAGE ON SCHEMA pgmate TO pgmate_arena_player;
GRANT EXECUTE ON PROCEDURE pgmate.arena(jsonb, jsonb, int, jsonb) TO pgmate_arena_player;
SET ROLE pgmate_arena_player;
\set VERBOSITY terse
CALL pgmate.arena('"uci:/usr/games/stockfish"', '"random"', 2);
\set VERBOSITY default
RESET ROLE;
REVOKE ALL ON PROCEDURE pgmate.arena(jsonb, jsonb, int, jsonb) FROM pgmate_arena_player;
REVOKE ALL ON SCHEMA pgmate FROM pgmate_arena_player;
DROP ROLE pgmate_arena_player;

-- an engine that cannot start fails the call clearly, before anything is stored
\set VERBOSITY terse
CALL pgmate.arena('"uci:/nonexistent/engine"', '"random"', 2, '{"name": "no-engine"}');
\set VERBOSITY default
SELECT count(*) AS matches FROM pgmate.matches WHERE name = 'no-engine';

-- statement_timeout stops a long match between games; the finished games stay, resumable
SET statement_timeout = '1500ms';
SET client_min_messages = warning;  -- how many games finish in time varies
\set VERBOSITY terse
CALL pgmate.arena('"mcts:400"', '"mcts:400"', 200, '{"name": "long", "seed": 5, "parallel": 1, "max_plies": 20}');
\set VERBOSITY default
RESET statement_timeout;
RESET client_min_messages;
SELECT status, (SELECT count(*) FROM pgmate.games g WHERE g.match_id = m.id) BETWEEN 1 AND 199 AS some_games
  FROM pgmate.matches m WHERE name = 'long';

DELETE FROM pgmate.matches;
DELETE FROM pgmate.networks;
SELECT count(*) AS arena_games_left FROM pgmate.games WHERE source = 'arena';

-- the other suites share this database: no network left in the worker, identities from 1
SELECT pgmate.kill_worker();
SELECT pgmate.wait_for_worker();
SELECT setval(pg_get_serial_sequence('pgmate.games', 'id'), 1, false) AS games_id,
       setval(pg_get_serial_sequence('pgmate.networks', 'id'), 1, false) AS networks_id,
       setval(pg_get_serial_sequence('pgmate.matches', 'id'), 1, false) AS matches_id;
