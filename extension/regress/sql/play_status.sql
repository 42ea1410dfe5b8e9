-- play(), status(), in_check(), side_to_move(), piece_at(), pieces()
SELECT play('startpos', 'e2e4'), play('startpos', 'Nf3'), play('startpos', 'e2e4'::move);
SELECT play('startpos', '{e2e4,e7e5,g1f3,b8c6,f1c4,g8f6,e1g1}'::move[]);
SELECT play('startpos', '{}'::move[]) = 'startpos'::board AS nothing_played;
SELECT side_to_move('startpos'), side_to_move(play('startpos', 'e2e4'));
-- fool's mate
SELECT b, in_check(b), status(b)
  FROM (SELECT play('startpos', '{f2f3,e7e5,g2g4,d8h4}'::move[]) AS b) s;
SELECT status('7k/5Q2/6K1/8/8/8/8/8 b - - 0 1') AS stalemate,
       status('8/8/8/8/8/8/8/K6k w - - 0 1') AS bare_kings,
       status('8/8/8/8/8/8/8/KB5k w - - 0 1') AS king_bishop,
       status('8/8/8/8/8/8/R7/K6k w - - 100 80') AS fifty,
       status('startpos') AS start;
SELECT piece_at('startpos', 'e1'), piece_at('startpos', 'd8'), piece_at('startpos', 'e4') IS NULL AS empty;
SELECT * FROM pieces('8/8/8/4k3/8/8/4P3/4K3 w - - 0 1');
SELECT count(*) FROM pieces('startpos');
-- errors name the move and its place in the list
SELECT play('startpos', 'e2e5');
SELECT play('startpos', '{e2e4,e7e5,e1e3}'::move[]);
SELECT play('startpos', '{e2e4,NULL}'::move[]);
SELECT play('8/1P6/8/8/8/8/6k1/K7 w - - 0 1', 'b7b8');
-- the move counters stop at 65535: a FEN beyond is refused, and so is a move past it
SELECT play('4k3/8/8/8/8/8/8/4K3 w - - 0 65535', 'Kd1');
SELECT play('4k3/8/8/8/8/8/8/4K3 b - - 0 65535', 'Kd8');
SELECT play('4k3/8/8/8/8/8/8/4K3 w - - 0 65535', '{e1d1,e8d8}'::move[]);
SELECT play('4k3/8/8/8/8/8/8/4K3 w - - 65535 80', 'Kd1');
SELECT '4k3/8/8/8/8/8/8/4K3 w - - 0 65536'::board;
