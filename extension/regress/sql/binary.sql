-- binary send/recv: a round trip through COPY BINARY, and crafted input refused.
-- The server writes and reads a scratch file named after this backend.
CREATE FUNCTION pg_temp.copy_file() RETURNS text LANGUAGE sql
  AS $$ SELECT '/tmp/pgmate_regress_' || pg_backend_pid() || '.bin' $$;

CREATE TEMP TABLE src (b board, m move);
INSERT INTO src
  SELECT play('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', move), move
  FROM legal_moves('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1');
INSERT INTO src VALUES ('rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3', 'e7e8q');
CREATE TEMP TABLE dst (b board, m move);
DO $$ BEGIN
  EXECUTE format('COPY src TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY dst FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
END $$;
SELECT (SELECT count(*) FROM src) AS sent, (SELECT count(*) FROM dst) AS received,
       (SELECT count(*) FROM src JOIN dst USING (b, m)) AS identical;

SELECT board_send('startpos');
SELECT move_send('e7e8q'), move_send('e1g1');

-- Feeds raw bytes to board_recv (as a client's binary COPY would).
CREATE TEMP TABLE raw_in (b bytea);
CREATE TEMP TABLE board_out (b board);
CREATE FUNCTION pg_temp.recv_board(raw bytea) RETURNS board LANGUAGE plpgsql AS $$
DECLARE result board;
BEGIN
  TRUNCATE raw_in, board_out;
  INSERT INTO raw_in VALUES (raw);
  EXECUTE format('COPY raw_in TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY board_out FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
  SELECT b INTO result FROM board_out;
  RETURN result;
END $$;
SELECT pg_temp.recv_board(board_send('startpos'));
SELECT pg_temp.recv_board(board_send('8/8/8/8/8/8/8/K6k b - - 42 99'));
-- crafted values (the COPY context names a per-backend file: keep it out of the output)
\set SHOW_CONTEXT never
\set VERBOSITY sqlstate
SELECT pg_temp.recv_board(substring(board_send('startpos') FROM 1 FOR 31));
\set VERBOSITY default
SELECT pg_temp.recv_board(substring(board_send('startpos') FROM 1 FOR 31));
SELECT pg_temp.recv_board(board_send('startpos') || '\x00'::bytea);
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 8, 7 * 16 + 7));            -- piece code 7
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 10, 3 * 16 + 4));           -- e1 king becomes a queen
SELECT pg_temp.recv_board(set_byte(board_send('8/8/8/8/8/8/8/K6k w - - 0 1'), 9, 1));  -- data after the last piece
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 24, 128));                  -- reserved flag bits
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 25, 9));                    -- en-passant file 9
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 31, 1));                    -- reserved byte
SELECT pg_temp.recv_board(set_byte(board_send('startpos'), 2, 255));                   -- 40 occupied squares
SELECT pg_temp.recv_board('\x00000000000000000000000000000000000000000000000000000000000000ff'::bytea);
-- moves too: only encodings that text input could produce
CREATE TEMP TABLE move_out (m move);
CREATE FUNCTION pg_temp.recv_move(raw bytea) RETURNS move LANGUAGE plpgsql AS $$
DECLARE result move;
BEGIN
  TRUNCATE raw_in, move_out;
  INSERT INTO raw_in VALUES (raw);
  EXECUTE format('COPY raw_in TO %L WITH (FORMAT binary)', pg_temp.copy_file());
  EXECUTE format('COPY move_out FROM %L WITH (FORMAT binary)', pg_temp.copy_file());
  SELECT m INTO result FROM move_out;
  RETURN result;
END $$;
SELECT pg_temp.recv_move(move_send('e7e8q')), pg_temp.recv_move(move_send('g1f3'));
SELECT pg_temp.recv_move('\x0000');   -- from = to
SELECT pg_temp.recv_move('\x2184');   -- a kind bit only a board can know
SELECT pg_temp.recv_move('\x01');     -- short
