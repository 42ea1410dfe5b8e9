-- board_key() agrees with real Polyglot books: entries of Debian's gnuchess-book
-- (/usr/share/games/gnuchess/book.bin, 16-byte entries: key, move, weight, learn; all
-- big-endian) are found by the keys of positions, and their moves are legal there.
CREATE TEMP TABLE book AS
  SELECT substring(data FROM i * 16 + 1 FOR 8) AS key_bytes,
         (get_byte(data, i * 16 + 8) << 8) | get_byte(data, i * 16 + 9) AS move_bits,
         (get_byte(data, i * 16 + 10) << 8) | get_byte(data, i * 16 + 11) AS weight
  FROM (SELECT pg_read_binary_file('/usr/share/games/gnuchess/book.bin') AS data) f,
       generate_series(0, length(data) / 16 - 1) AS i;
SELECT count(*) > 100000 AS big_book FROM book;

-- Polyglot moves: to-file bits 0-2, to-rank 3-5, from-file 6-8, from-rank 9-11,
-- promotion 12-14; castling is written as the king taking its own rook.
CREATE FUNCTION pg_temp.book_uci(bits int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE uci WHEN 'e1h1' THEN 'e1g1' WHEN 'e1a1' THEN 'e1c1'
                  WHEN 'e8h8' THEN 'e8g8' WHEN 'e8a8' THEN 'e8c8' ELSE uci END
  FROM (SELECT chr(97 + ((bits >> 6) & 7)) || chr(49 + ((bits >> 9) & 7)) ||
               chr(97 + (bits & 7)) || chr(49 + ((bits >> 3) & 7)) ||
               coalesce((ARRAY['n', 'b', 'r', 'q'])[(bits >> 12) & 7], '') AS uci) m
$$;

-- Book moves from a position: found by its key, each one legal on the board.
CREATE FUNCTION pg_temp.book_moves(b board) RETURNS TABLE (uci text, weight int, legal bool)
LANGUAGE sql AS $$
  SELECT pg_temp.book_uci(move_bits), weight, is_legal(b, pg_temp.book_uci(move_bits)::move)
  FROM book WHERE key_bytes = int8send(board_key(b))
  ORDER BY weight DESC, 1
$$;

SELECT * FROM pg_temp.book_moves('startpos') LIMIT 5;
SELECT count(*) AS entries, bool_and(legal) AS all_legal FROM pg_temp.book_moves('startpos');
-- deeper in a line: after 1. e4 c5 2. Nf3 d6 3. d4
SELECT count(*) > 0 AS found, bool_and(legal) AS all_legal
  FROM pg_temp.book_moves(play('startpos', '{e2e4,c7c5,g1f3,d7d6,d2d4}'::move[]));
-- every position of a main line is in the book and all its book moves are legal
SELECT p.ply, p.san, count(bm.*) > 0 AS in_book, bool_and(bm.legal) AS legal
  FROM game_positions('startpos', '{d2d4,g8f6,c2c4,e7e6,b1c3,f8b4,e2e3,e8g8}') p
  LEFT JOIN LATERAL pg_temp.book_moves(p.board) bm ON true
  GROUP BY p.ply, p.san ORDER BY p.ply;
-- a position no book holds
SELECT count(*) AS entries FROM pg_temp.book_moves('8/8/8/8/8/8/8/K6k w - - 0 1');
