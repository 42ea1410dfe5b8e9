-- games as rows: PGN import (well-formed, malformed, lenient, skip mode), export,
-- positions, game_keys, openings
SELECT count(*) FROM pgmate.games;

SELECT pgmate.import_pgn($pgn$
[Event "Casual game"]
[Site "London"]
[Date "1851.06.21"]
[Round "?"]
[White "Anderssen, Adolf"]
[Black "Kieseritzky, Lionel"]
[Result "1-0"]
[ECO "C33"]

1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 5. Bxb5 Nf6 6. Nf3 Qh6 7. d3 Nh5 8. Nh4
Qg5 9. Nf5 c6 10. g4 Nf6 11. Rg1 cxb5 12. h4 Qg6 13. h5 Qg5 14. Qf3 Ng8 15. Bxf4
Qf6 16. Nc3 Bc5 17. Nd5 Qxb2 18. Bd6 Bxg1 {It is from this move that Black's
defeat stems.} 19. e5 Qxa1+ 20. Ke2 Na6 21. Nxg7+ Kd8 22. Qf6+ Nxf6 23. Be7# 1-0

[Event "Variations, NAGs and a promotion"]
[White "A"]
[Black "B"]
[Result "0-1"]
[SetUp "1"]
[FEN "8/8/8/8/8/5k2/4p3/6K1 b - - 0 60"]

60... e1=Q+ $1 (60... Kg3 61. Kf1) 61. Kh2 Qf2+ 62. Kh3 Qg3# 0-1
$pgn$);

SELECT id, source, event, white, black, result, ply_count, date, tags->>'ECO' AS eco FROM pgmate.games ORDER BY id;
SELECT to_pgn(g) FROM pgmate.games g ORDER BY id;
SELECT ply, board, move, san FROM game_positions(
  (SELECT start FROM pgmate.games WHERE id = 2), (SELECT moves FROM pgmate.games WHERE id = 2));
SELECT cardinality(game_keys(start, moves)) AS positions, ply_count FROM pgmate.games ORDER BY id;
-- the exported text reads back to the same game
SELECT g.moves = p.moves AS same_moves, g.start = p.start AS same_start, p.result
  FROM pgmate.games g, LATERAL pgn_games(to_pgn(g)) p ORDER BY g.id;

-- game_keys as a plain filter (the position index, position_index.sql, answers these fast)
SELECT id, white FROM pgmate.games
  WHERE game_keys(start, moves) @> ARRAY[board_key('rnbqkbnr/pppp1ppp/8/8/4Pp2/8/PPPP2PP/RNBQKBNR w KQkq - 0 3')];
SELECT count(*) FROM pgmate.games WHERE game_keys(start, moves) @> ARRAY[board_key('startpos')];
SELECT count(*) AS gin_indexes FROM pg_indexes WHERE schemaname = 'pgmate' AND tablename = 'games' AND indexdef LIKE '%USING gin%';

-- malformed PGN: the error names the game, the move and the line; nothing is inserted
SELECT pgmate.import_pgn($pgn$
[Event "good"]
1. e4 e5 1/2-1/2

[Event "bad"]
1. e4 e5 2. Ke3 Nc6 0-1
$pgn$);
SELECT count(*) FROM pgmate.games;
SELECT * FROM pgn_games('1. e4 @@ 1-0');
SELECT * FROM pgn_games('[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]
1. e4 *');
SELECT * FROM pgn_games('1. e4', 'ignore');
-- a Result tag the movetext contradicts: the tag's result, the movetext's beside it, a NOTICE
SELECT * FROM pgn_games('[Result "1-0"]
1. e4 e5 0-1');
-- a repeated tag, a second result with no game before it: errors, not a silent choice (nor
-- an empty game)
SELECT * FROM pgn_games('[Event "a"]
[Event "b"]
1. e4 *');
SELECT * FROM pgn_games('1. e4 e5 1-0 0-1');
SELECT result, moves FROM pgn_games('1. e4 e5 1-0 0-1', on_error => 'skip');
-- skip mode: the bad game is left out and counted
SELECT pgmate.import_pgn($pgn$
[Event "good"]
1. e4 e5 1/2-1/2

[Event "bad"]
1. e4 e5 2. Ke3 Nc6 0-1

[Event "good too"]
1. d4 d5 2. c4 *
$pgn$, on_error => 'skip');
SELECT event, result, moves FROM pgmate.games WHERE id > 2 ORDER BY id;
-- games without tags, a missing result
SELECT tags, moves, result FROM pgn_games('1. e4 e5 2. Nf3');
-- PGN as found in the wild: a null move in a variation, long algebraic, "1/2" as the
-- result, a space before '+', a stray comma; the roster's "unknown" values are read as
-- missing tags
SELECT tags, moves, result FROM pgn_games($pgn$
[Event "?"]
[Site "Wijk aan Zee"]
[Date "????.??.??"]
[Result "1/2-1/2"]

1. e4 (1. -- d5) e5 2. g1-f3 Nc6, 3. Bb5 a6 4. Bxc6 dxc6 5. Nxe5 Qd4 6. Nf3 Qxe4 + 1/2
$pgn$);

-- moves are checked when stored, whatever the route
\set VERBOSITY terse
INSERT INTO pgmate.games (moves) VALUES ('{e2e4,e7e5,e1e3}');
\set VERBOSITY default
INSERT INTO pgmate.games (moves, result) VALUES ('{f2f3,e7e5,g2g4,d8h4}', '0-1') RETURNING id, ply_count;
SELECT game_positions('startpos', '{e2e4,e2e4}');
SELECT game_positions('4k3/8/8/8/8/8/8/4K3 b - - 0 65535', '{e8d8}');

-- openings by position (transpositions count)
SELECT pgmate.import_openings($pgn$
[ECO "C20"]
[Opening "King's pawn game"]

1. e4 e5 *

[ECO "C44"]
[Opening "King's pawn game"]
[Variation "Tayler opening"]

1. e4 e5 2. Nf3 Nc6 3. Be2 *

[ECO "D06"]
[Opening "Queen's Gambit"]

1. d4 d5 2. c4 *
$pgn$);
SELECT * FROM opening('startpos', '{e2e4,e7e5,g1f3,b8c6,f1e2,g8f6}');
SELECT * FROM opening('startpos', '{c2c4,d7d5,d2d4}');   -- transposes into the Queen's Gambit
SELECT * FROM opening('startpos', '{a2a3}');
SELECT g.id, o.* FROM pgmate.games g, LATERAL opening(g.start, g.moves) o ORDER BY g.id;

-- a game's moves are numbered from 1 (moves[1] is the first), whatever the route (ids
-- given, so that the refused rows take none from the sequence)
\set VERBOSITY terse
INSERT INTO pgmate.games (id, moves) VALUES (1000000, '[0:0]={e2e4}');
INSERT INTO pgmate.games (id, moves) VALUES (1000000, '[2:3]={e2e4,e7e5}');
\set VERBOSITY default

-- a game's speed as lichess names it, from its TimeControl tag (base + 40 x increment)
SELECT tc, pgmate.game_speed(tc) FROM (VALUES ('15+0'), ('60+0'), ('180+2'), ('300+3'), ('600+5'), ('900+15'),
    ('1800+20'), ('-'), ('?'), ('40/9000:3600'), ('300')) t(tc);
INSERT INTO pgmate.games (id, moves, tags) VALUES (1000001, '{e2e4}', '{"TimeControl": "180+2"}'), (1000002, '{d2d4}', '{}');
SELECT id, speed FROM pgmate.games WHERE id IN (1000001, 1000002) ORDER BY id;
-- the explorer filtered by speed: one, or an array of them; anything else is named
SELECT san, games FROM pgmate.explorer('startpos', '{"speed": "blitz"}');
SELECT san, games FROM pgmate.explorer('startpos', '{"speed": ["blitz", "rapid"]}');
SELECT count(*) FROM pgmate.explorer('startpos', '{"speed": "rapid"}');
\set VERBOSITY terse
SELECT * FROM pgmate.explorer('startpos', '{"speed": "fast"}');
SELECT * FROM pgmate.explorer('startpos', '{"speed": []}');
\set VERBOSITY default
DELETE FROM pgmate.games WHERE id IN (1000001, 1000002);
