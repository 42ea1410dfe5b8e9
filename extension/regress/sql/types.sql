-- board and move: text I/O, equality, ordering, hashing, keys
SELECT 'startpos'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1'::board;  -- e3 dropped: no black pawn can take
SELECT 'rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3'::board; -- kept: d4 can take
SELECT '8/8/8/8/8/8/8/K6k w - -'::board;  -- clocks default to 0 1
SELECT 'startpos'::board = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'::board AS same;
SELECT 'startpos'::board <> play('startpos', 'e2e4') AS differ;
SELECT to_hex(board_key('startpos')) AS start_key;
SELECT to_hex(board_key(play('startpos', '{e2e4,d7d5,e4e5,f7f5}'::move[]))) AS key_with_ep;
-- clocks are part of the value but not of the key
SELECT board_key('8/8/8/8/8/8/8/K6k w - - 0 1') = board_key('8/8/8/8/8/8/8/K6k w - - 7 30') AS same_key,
       '8/8/8/8/8/8/8/K6k w - - 0 1'::board = '8/8/8/8/8/8/8/K6k w - - 7 30'::board AS same_board;

SELECT 'e2e4'::move, 'e7e8q'::move, 'e1g1'::move, 'a7a8n'::move;
SELECT 'e2e4'::move = 'e2e4'::move AS eq, 'e7e8q'::move = 'e7e8r'::move AS promo_eq, 'a2a3'::move < 'a2a4'::move AS lt;
SELECT from_square('g1f3'), to_square('g1f3'), promotion('g1f3'), promotion('b7b8q');

-- btree and hash opclasses
CREATE TEMP TABLE positions AS
  SELECT play('startpos', m.move) AS b, m.move FROM legal_moves('startpos') m;
CREATE INDEX ON positions USING btree (b);
CREATE INDEX ON positions USING hash (b);
CREATE INDEX ON positions (move);
SET enable_seqscan = off;
SELECT move FROM positions WHERE b = 'rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1';
EXPLAIN (COSTS OFF) SELECT move FROM positions WHERE b = 'startpos';
RESET enable_seqscan;
SELECT count(DISTINCT b) AS distinct_boards, count(DISTINCT move) AS distinct_moves FROM positions;
SELECT move FROM positions ORDER BY move LIMIT 5;
-- hash joins and grouping use the hash opclass
SET enable_mergejoin = off;
SELECT count(*) FROM positions p JOIN positions q ON p.b = q.b;
RESET enable_mergejoin;
