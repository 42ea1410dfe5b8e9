-- legal_moves(): every special move, the batch helpers, san() and move()
SELECT * FROM legal_moves('startpos') ORDER BY uci;
SELECT count(*) FROM legal_moves('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1');

-- castling both ways, not through check
SELECT uci, san FROM legal_moves('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1') WHERE piece = 'K' ORDER BY uci;
SELECT uci, san FROM legal_moves('r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1') WHERE piece = 'K' ORDER BY uci;
-- en passant, and the pawn pinned on its rank that may not take
SELECT uci, san, captured FROM legal_moves('rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3') WHERE piece = 'P' AND captured IS NOT NULL;
SELECT uci FROM legal_moves('8/8/8/KPp4r/8/8/8/6k1 w - c6 0 2') WHERE uci = 'b5c6';
-- promotions to every piece, with check and mate marks
SELECT uci, san, promotion, is_check, is_mate FROM legal_moves('8/1P6/8/8/8/8/6k1/K7 w - - 0 1') WHERE piece = 'P';
SELECT uci, san, is_mate FROM legal_moves('6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1') WHERE is_mate;
-- double check: only the king moves
SELECT DISTINCT piece FROM legal_moves('4k3/8/8/8/8/8/3n4/r3K3 w - - 0 1');

SELECT legal_move_count('startpos'), legal_move_count('7k/5Q2/6K1/8/8/8/8/8 b - - 0 1') AS stalemated;
SELECT is_legal('startpos', 'e2e4'), is_legal('startpos', 'e2e5'),
       is_legal('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1', 'e1g1');

SELECT san('startpos', 'g1f3'), san('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1', 'e1c1');
SELECT move('startpos', 'Nf3'), move('startpos', 'e4'), move('startpos', 'g1f3'),
       move('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1', '0-0-0');
-- a move from legal_moves equals the same move typed as text
SELECT bool_and(m.move = m.uci::move) AS uci_roundtrip, bool_and(move(b, m.san) = m.move) AS san_roundtrip
  FROM (SELECT 'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1'::board AS b) p,
       LATERAL legal_moves(p.b) m;
