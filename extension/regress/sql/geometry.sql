-- move tables (the cross-join tradition done right) and the matrix views
SELECT piece, count(*) AS moves, sum(squares_crossed) AS squares_crossed
  FROM move_table() GROUP BY piece ORDER BY piece;
SELECT count(*) FILTER (WHERE piece LIKE '%pawn') AS pawns, count(*) AS total FROM move_table();
SELECT * FROM move_table('castling');
SELECT * FROM move_table('knight') WHERE from_square = 'a1';
SELECT * FROM move_table('white_pawn') WHERE from_square = 'e2';
SELECT count(*) FROM move_table('KNIGHT');
SELECT * FROM move_table('elephant');
SELECT * FROM move_table('');   -- NULL (the default) is every piece; '' names none

-- the king-matrix seed: a king on d4 and on a8
SELECT move_mask('king', 'd4');
SELECT move_mask('king', 'a8');
SELECT move_mask('knight', 'g1');
SELECT move_mask('black_pawn', 'e7');
SELECT move_mask('white_pawn', 'e1');
SELECT move_mask('king', 'i9');
SELECT move_mask('', 'd4');
-- a matrix's rows, as a picture
SELECT r AS row, array_to_string((move_mask('queen', 'd4'))[r:r][1:8], ' ') AS cells
  FROM generate_series(1, 8) r;

-- attacks in a position, blockers included
SELECT attack_mask('startpos', 'g1');
SELECT attack_mask('startpos', 'd1');
SELECT attack_mask('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', 'f3');
SELECT attack_mask('startpos', 'e4');
-- total attacked squares of every white piece in the start position
SELECT sum(c) FROM pieces('startpos') p, LATERAL unnest(attack_mask('startpos', p.square)) c
  WHERE p.piece = upper(p.piece);
