-- perft from SQL on the six standard positions, divide, and cancellation
SELECT name, depth, perft(fen::board, depth)
FROM (VALUES
  ('start',     'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1', 4),
  ('kiwipete',  'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', 3),
  ('position3', '8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1', 4),
  ('position4', 'r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1', 3),
  ('position5', 'rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8', 3),
  ('position6', 'r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10', 3)
) AS t(name, fen, depth);
SELECT perft('startpos', 0) AS depth0, perft('7k/5Q2/6K1/8/8/8/8/8 b - - 0 1', 3) AS stalemate;
SELECT * FROM perft_divide('startpos', 2) ORDER BY move LIMIT 4;
SELECT sum(nodes) FROM perft_divide('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', 3);
-- depth limits
SELECT perft('startpos', -1);
SELECT perft('startpos', 16);
-- a long run stops at statement_timeout
SET statement_timeout = '200ms';
SELECT perft('startpos', 9);
RESET statement_timeout;
