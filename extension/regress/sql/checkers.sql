-- American checkers: checkers_board and checkers_move, legal moves, perft, play, status,
-- pictures, binary I/O and bad input. The functions carry the chess names; a checkers
-- position is written with its type (an untyped literal means a chess board).

-- the start position
SELECT 'startpos'::checkers_board AS start;
SELECT 'startpos'::checkers_board = 'B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12' AS same,
       side_to_move('startpos'::checkers_board), status('startpos'::checkers_board);
SELECT board_diagram('startpos'::checkers_board);
SELECT * FROM legal_moves('startpos'::checkers_board);
SELECT legal_move_count('startpos'::checkers_board);
-- an untyped literal still means a chess board
SELECT perft('startpos', 2) AS chess, perft('startpos'::checkers_board, 2) AS checkers;

-- FEN: ranges and either field order in, canonical out; kings; a side without pieces
SELECT fen, fen::checkers_board AS canonical
FROM (VALUES ('B:W21-32:B1-12'), ('W:B12,1:W30,K3'), ('W:WK3,21:B12,K30'), ('B:W18,K1-2:BK32'),
             ('W:W:B1'), ('B:W21:B')) AS t(fen);
SELECT fen::checkers_board::text::checkers_board = fen::checkers_board AS round_trip
FROM (VALUES ('W:WK3,21:B12,K30'), ('B:W18,K1-2:BK32')) AS t(fen);

-- perft from the start (Bik 2009; OEIS A133046)
SELECT depth, perft('startpos'::checkers_board, depth) FROM generate_series(0, 7) AS depth;
SELECT * FROM perft_divide('startpos'::checkers_board, 3);
SELECT sum(nodes) FROM perft_divide('startpos'::checkers_board, 5);
SELECT count(*) AS depth_0_rows FROM perft_divide('startpos'::checkers_board, 0);

-- capture rules: Black's man on 6 can take two or three pieces, the man on 14 two.
-- 'any' (the American rule) allows every sequence; 'longest' only those taking the most.
SELECT board_diagram('B:W10,18,19,27:B6,14'::checkers_board);
SELECT * FROM legal_moves('B:W10,18,19,27:B6,14'::checkers_board);
SELECT * FROM legal_moves('B:W10,18,19,27:B6,14'::checkers_board, 'longest');
SELECT legal_move_count('B:W10,18,19,27:B6,14'::checkers_board) AS any_rule,
       legal_move_count('B:W10,18,19,27:B6,14'::checkers_board, 'longest') AS longest_rule;
SELECT depth, perft('B:W10,18,19,27:B6,14'::checkers_board, depth) AS any_rule,
       perft('B:W10,18,19,27:B6,14'::checkers_board, depth, rule => 'longest') AS longest_rule
FROM generate_series(1, 4) AS depth;
SELECT * FROM perft_divide('B:W10,18,19,27:B6,14'::checkers_board, 3, 'longest');

-- a multiple jump that ends by crowning, written in full or by its start and end only
SELECT play('B:W10,18,19,27:B6,14'::checkers_board, '6x15x24x31') AS full_path,
       play('B:W10,18,19,27:B6,14'::checkers_board, '6x31') AS start_and_end,
       play('B:W10,18,19,27:B6,14'::checkers_board, '6x15x24x31'::checkers_move) AS as_move;
SELECT board_diagram(play('B:W10,18,19,27:B6,14'::checkers_board, '6x31'));
-- a man reaching the far row is crowned; a king moves both ways
SELECT * FROM legal_moves('W:W6:B20'::checkers_board);
SELECT play('W:W6:B20'::checkers_board, '6-1') AS crowned;
SELECT * FROM legal_moves('W:WK1:B20'::checkers_board);
-- a king's jump round a loop comes back to its start
SELECT * FROM legal_moves('W:WK14:B17,18,25,26'::checkers_board);
SELECT play('W:WK14:B17,18,25,26'::checkers_board, '14x21x30x23x14') AS loop_played;

-- play with text, a move, and a move array; move() resolves text against a board
SELECT play('startpos'::checkers_board, '11-15') AS text_move,
       play('startpos'::checkers_board, '11-15'::checkers_move) AS typed_move,
       play('startpos'::checkers_board, '{11-15,23-19,8-11,22-17}'::checkers_move[]) AS opening;
-- 15-19 offers a man: White must take it, and Black takes back
SELECT * FROM legal_moves(play('startpos'::checkers_board, '{11-15,24-20,15-19}'::checkers_move[]));
SELECT play(play('startpos'::checkers_board, '{11-15,24-20,15-19}'::checkers_move[]), '23x16') AS after_the_jump;
SELECT * FROM legal_moves(play('startpos'::checkers_board, '{11-15,24-20,15-19,23x16}'::checkers_move[]));
SELECT move('startpos'::checkers_board, '11-15') AS move,
       move('B:W10,18,19,27:B6,14'::checkers_board, '6x31') AS jump_from_shorthand;
SELECT is_legal('startpos'::checkers_board, '11-15') AS legal, is_legal('startpos'::checkers_board, '21-17') AS illegal,
       is_legal('B:W10,18,19,27:B6,14'::checkers_board, '14x23x32') AS any_rule,
       is_legal('B:W10,18,19,27:B6,14'::checkers_board, '14x23x32', 'longest') AS longest_rule;
-- a game to its end: Black has no piece left, or no move
SELECT status('B:W21:B'::checkers_board) AS no_pieces, status('B:W32:B28'::checkers_board) AS blocked,
       status('W:W32:B28'::checkers_board) AS white_to_move;
SELECT play('W:W10:B6'::checkers_board, '10x1') AS last_capture, status(play('W:W10:B6'::checkers_board, '10x1'));
SELECT board_diagram('B:W32:B28'::checkers_board);
SELECT * FROM legal_moves('B:W32:B28'::checkers_board);
SELECT perft('B:W32:B28'::checkers_board, 3) AS no_moves;

-- checkers_move: numeric notation, board-free; equal to the legal move it names
SELECT '11-15'::checkers_move AS simple, '15x24'::checkers_move AS jump, '15X24x31'::checkers_move AS multiple,
       ' 9-13 '::checkers_move AS spaces;
SELECT '11-15'::checkers_move = move AS equal, '11-15'::checkers_move <> move AS differ
FROM legal_moves('startpos'::checkers_board) WHERE notation = '11-15';
SELECT (SELECT move FROM legal_moves('B:W10,18,19,27:B6,14'::checkers_board) WHERE captures = 3)
       = '6x15x24x31'::checkers_move AS jump_equal,
       '6x15x22'::checkers_move = '6x15x24x31'::checkers_move AS different_paths;
-- ordered as notation sorts (start square, then landing squares); hashing agrees with =
SELECT m FROM unnest('{12-16,9x18,9-13,9x18x27,10-15,9-14}'::checkers_move[]) AS m ORDER BY m;
SET enable_mergejoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM legal_moves('startpos'::checkers_board) l
  JOIN unnest('{11-15,9-13,21-17}'::checkers_move[]) AS m ON l.move = m;
SELECT count(*) AS hash_joined FROM legal_moves('startpos'::checkers_board) l
  JOIN unnest('{11-15,9-13,21-17}'::checkers_move[]) AS m ON l.move = m;
RESET enable_mergejoin;
RESET enable_nestloop;

-- checkers_board: btree and hash indexes, grouping
CREATE TEMP TABLE checkers_positions AS
  SELECT play('startpos'::checkers_board, l.move) AS b, l.move FROM legal_moves('startpos'::checkers_board) l;
INSERT INTO checkers_positions
  SELECT play(p.b, l.move), l.move FROM checkers_positions p, legal_moves(p.b) l;
CREATE INDEX ON checkers_positions USING btree (b);
CREATE INDEX ON checkers_positions USING hash (b);
SELECT count(*) AS rows, count(DISTINCT b) AS distinct_boards, count(DISTINCT move) AS distinct_moves
FROM checkers_positions;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT move FROM checkers_positions WHERE b = play('startpos'::checkers_board, '9-13');
SELECT move FROM checkers_positions WHERE b = play('startpos'::checkers_board, '9-13');
RESET enable_seqscan;
SELECT side_to_move(b), count(*), count(DISTINCT b) AS boards FROM checkers_positions GROUP BY 1 ORDER BY 1;

-- board_svg: 64 squares, one highlight per square of the last move, a disc per piece
SELECT left(s, 5) AS opening, right(s, 7) AS closing,
       (length(s) - length(replace(s, '<rect', ''))) / 5 AS rects,
       (length(s) - length(replace(s, 'class="piece', ''))) / 12 AS pieces,
       (length(s) - length(replace(s, 'class="crown', ''))) / 12 AS kings
  FROM (SELECT board_svg('startpos'::checkers_board) AS s) x;
SELECT (length(s) - length(replace(s, '<rect', ''))) / 5 AS rects,
       (length(s) - length(replace(s, 'class="last-capture', ''))) / 19 AS jumped,
       (length(s) - length(replace(s, 'class="crown', ''))) / 12 AS kings
  FROM (SELECT board_svg(play('B:W10,18,19,27:B6,14'::checkers_board, '6x31'), '6x15x24x31') AS s) x;
SELECT board_svg(NULL::checkers_board) IS NULL AS null_board,
       board_svg('startpos'::checkers_board, NULL) = board_svg('startpos'::checkers_board) AS null_move,
       xml_is_well_formed_document(board_svg(play('startpos'::checkers_board, '11-15'), '11-15')) AS well_formed;

-- binary send/recv: a round trip through COPY BINARY, and crafted input refused
CREATE FUNCTION pg_temp.copy_file() RETURNS text LANGUAGE sql
  AS $$ SELECT '/tmp/pgmate_regress_' || pg_backend_pid() || '_checkers.bin' $$;
CREATE TEMP TABLE src (b checkers_board, m checkers_move);
INSERT INTO src SELECT b, move FROM checkers_positions;
INSERT INTO src SELECT play('B:W10,18,19,27:B6,14'::checkers_board, move), move
  FROM legal_moves('B:W10,18,19,27:B6,14'::checkers_board);
INSERT INTO src VALUES ('W:WK3,21:B12,K30', '14x21x30x23x14'), ('B:W:BK1', '1-6'), ('W:W:B', '32-27');
CREATE TEMP TABLE dst (b checkers_board, m checkers_move);
DO $$ BEGIN
  EXECUTE format('COPY src TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY dst FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
END $$;
SELECT (SELECT count(*) FROM src) AS sent, (SELECT count(*) FROM dst) AS received,
       (SELECT count(*) FROM src JOIN dst USING (b, m)) AS identical;
-- 13 bytes: White's, Black's and the kings' squares (bit n-1 for square n, network byte
-- order), then the side to move (0 Black, 1 White)
SELECT checkers_board_send('startpos') AS start, checkers_board_send('W:WK3,21:B12,K30') AS kings;
-- the number of jumps, the start square, then the end or every landing square
SELECT checkers_move_send('11-15') AS simple, checkers_move_send('6x15x24x31') AS triple;

CREATE TEMP TABLE raw_in (r bytea);
CREATE TEMP TABLE board_in (b checkers_board);
CREATE TEMP TABLE move_in (m checkers_move);
CREATE FUNCTION pg_temp.recv_board(raw bytea) RETURNS checkers_board LANGUAGE plpgsql AS $$
DECLARE result checkers_board;
BEGIN
  TRUNCATE raw_in, board_in;
  INSERT INTO raw_in VALUES (raw);
  EXECUTE format('COPY raw_in TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY board_in FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
  SELECT b INTO result FROM board_in;
  RETURN result;
END $$;
CREATE FUNCTION pg_temp.recv_move(raw bytea) RETURNS checkers_move LANGUAGE plpgsql AS $$
DECLARE result checkers_move;
BEGIN
  TRUNCATE raw_in, move_in;
  INSERT INTO raw_in VALUES (raw);
  EXECUTE format('COPY raw_in TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY move_in FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
  SELECT m INTO result FROM move_in;
  RETURN result;
END $$;
SELECT pg_temp.recv_board(checkers_board_send('startpos')) AS start,
       pg_temp.recv_board('\x000000020000000000000002' || '\x01'::bytea) AS white_king_on_2;
SELECT pg_temp.recv_move('\x000b0f') AS simple, pg_temp.recv_move('\x03060f181f') AS triple;
-- crafted values (the COPY context names a per-backend file: keep it out of the output)
\set SHOW_CONTEXT never
\set VERBOSITY sqlstate
SELECT pg_temp.recv_board('\x00000001000000020000000000'::bytea);
\set VERBOSITY default
SELECT pg_temp.recv_board(substring(checkers_board_send('startpos') FROM 1 FOR 12));       -- short
SELECT pg_temp.recv_board(checkers_board_send('startpos') || '\x00'::bytea);               -- long
SELECT pg_temp.recv_board(set_byte(checkers_board_send('startpos'), 12, 2));              -- side byte 2
SELECT pg_temp.recv_board('\x00100000001000000000000000'::bytea);                        -- 21 is both colours
SELECT pg_temp.recv_board('\x00100000000000010000000200'::bytea);                        -- a king on empty 2
SELECT pg_temp.recv_board('\x00000001000000000000000000'::bytea);                        -- a white man on 1
SELECT pg_temp.recv_board('\x00000000800000000000000000'::bytea);                        -- a black man on 32
SELECT pg_temp.recv_board('\x0001fff0000000000000000000'::bytea);                        -- 13 white pieces
SELECT pg_temp.recv_move('\x000b11');        -- 11 and 17 are not neighbours
SELECT pg_temp.recv_move('\x020f180f');      -- 19 jumped twice
SELECT pg_temp.recv_move('\x0a0102030405060708090a0b0c');   -- 10 jumps
SELECT pg_temp.recv_move('\x010f');          -- short
SELECT pg_temp.recv_move('\x000b21');        -- square 33
\set SHOW_CONTEXT errors

-- bad input: errors name the input; SQLSTATE 22P02 for text that is not a position or a
-- move, 22023 for a move not legal on the board, a bad rule or depth
SELECT ''::checkers_board;
SELECT 'X:W21:B1'::checkers_board;
SELECT 'B:W21'::checkers_board;
SELECT 'B:W21:B1:W22'::checkers_board;
SELECT 'B:W33:B1'::checkers_board;
SELECT 'B:W21,21:B1'::checkers_board;
SELECT 'B:W21:B21'::checkers_board;
SELECT 'B:W1:B5'::checkers_board;
SELECT 'B:W21:B30'::checkers_board;
SELECT 'B:W15-32:B1'::checkers_board;
SELECT 'B:W21:W22'::checkers_board;
SELECT 'B:W21, 22:B1'::checkers_board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'::checkers_board;
SELECT ''::checkers_move;
SELECT '11'::checkers_move;
SELECT '11-17'::checkers_move;
SELECT '11-15-19'::checkers_move;
SELECT '11-15x19'::checkers_move;
SELECT '15x31'::checkers_move;
SELECT '15x24x15'::checkers_move;
SELECT '0-4'::checkers_move;
SELECT 'e2e4'::checkers_move;
SELECT play('startpos'::checkers_board, '21-17');
SELECT play('startpos'::checkers_board, '11-14');
SELECT play('startpos'::checkers_board, '15-19'::checkers_move);
SELECT play('startpos'::checkers_board, '11x18');
SELECT play('B:W10,18,19,27:B6,14'::checkers_board, '14-17');
SELECT play('B:W10,18,19,27:B6,14'::checkers_board, '6x15');
SELECT play('B:W10,18,19,27:B6,14'::checkers_board, '14x23x32', 'longest');
SELECT play('startpos'::checkers_board, '{11-15,23-19,11-16}'::checkers_move[]);
SELECT play('startpos'::checkers_board, '{11-15,NULL}'::checkers_move[]);
SELECT move('startpos'::checkers_board, '9x18');
SELECT perft('startpos'::checkers_board, 3, 'all');
SELECT * FROM legal_moves('startpos'::checkers_board, 'Longest');
SELECT perft('startpos'::checkers_board, -1);
SELECT perft('startpos'::checkers_board, 16);
\set VERBOSITY sqlstate
SELECT 'B:W21:B30'::checkers_board;
SELECT '11-17'::checkers_move;
SELECT play('startpos'::checkers_board, '11-');
SELECT play('startpos'::checkers_board, '11-14');
SELECT play('startpos'::checkers_board, '15-19'::checkers_move);
SELECT play('startpos'::checkers_board, '{11-15,23-19,11-16}'::checkers_move[]);
SELECT move('startpos'::checkers_board, '9x18');
SELECT perft('startpos'::checkers_board, 3, 'all');
SELECT perft('startpos'::checkers_board, 16);
-- a long run stops at statement_timeout
SET statement_timeout = '200ms';
SELECT perft('startpos'::checkers_board, 15);
RESET statement_timeout;
\set VERBOSITY default

-- perft on pgmate-worker: the same counts ('gpu' needs a GPU in the worker)
SELECT pgmate.wait_for_worker();
SELECT depth, perft('startpos'::checkers_board, depth, device => 'worker') AS worker,
       perft('B:W10,18,19,27:B6,14'::checkers_board, depth, 'longest', 'worker') AS worker_longest
  FROM generate_series(1, 6) AS depth;
SELECT perft('startpos'::checkers_board, 9, device => 'worker') = perft('startpos'::checkers_board, 9) AS same_as_backend;
\set VERBOSITY sqlstate
SELECT perft('startpos'::checkers_board, 3, device => 'tpu');
\set VERBOSITY default
