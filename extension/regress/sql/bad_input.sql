-- bad input of every type: a clear error naming the input, with its SQLSTATE
\set VERBOSITY sqlstate
SELECT ''::board;
\set VERBOSITY default
SELECT ''::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1'::board;
SELECT 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1'::board;
SELECT '8/8/8/8/8/8/8/8 w - - 0 1'::board;
SELECT 'kk6/8/8/8/8/8/8/K7 w - - 0 1'::board;
SELECT 'P6k/8/8/8/8/8/8/K7 w - - 0 1'::board;
SELECT 'k7/8/8/8/8/8/8/RK6 w - - 0 1'::board;
SELECT 'k7/8/8/8/8/8/8/K7 w K - 0 1'::board;
SELECT 'e2e'::move;
SELECT 'e2e9'::move;
SELECT 'e2e2'::move;
SELECT 'e7e8k'::move;
SELECT '0000'::move;
SELECT piece_at('startpos', 'z9');
SELECT move('startpos', 'Nf5');
SELECT move('startpos', 'Qx');
SELECT move('r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1', 'Rd1d2');
SELECT san('startpos', 'e2e5');
\set VERBOSITY sqlstate
SELECT 'x'::move;
SELECT move('startpos', 'Nf5');
SELECT play('startpos', '{e2e4,e7e5,e1e3}'::move[]);
SELECT perft('startpos', 99);
-- an illegal move is 22023 in every function, text that is not a move 22P02
SELECT play('startpos', 'e2e5'::move);
SELECT play('startpos', 'Nf5');
SELECT san('startpos', 'e2e5');
SELECT play('startpos', 'Qx');
SELECT play('4k3/8/8/8/8/8/8/4K3 b - - 0 65535', 'Kd8');
-- quoted input is cut between characters, never inside one, and control bytes are
-- escaped: the message stays valid in any client encoding (a character cut in two made
-- the error 22021 for a LATIN1 client)
\set VERBOSITY default
SELECT move('startpos', 'N' || repeat(chr(233), 70));
SELECT move('startpos', E'Nf3\n');
SET client_encoding = 'LATIN1';
\set VERBOSITY sqlstate
SELECT move('startpos', 'N' || repeat(chr(233), 70));
SELECT ('x' || repeat(chr(233), 200))::board;
SELECT ('1' || repeat(chr(233), 100))::checkers_move;
SELECT piece_at('startpos', 'e' || repeat(chr(233), 30));
SELECT * FROM pgn_games('', 'x' || repeat(chr(233), 30));
RESET client_encoding;
\set VERBOSITY default
