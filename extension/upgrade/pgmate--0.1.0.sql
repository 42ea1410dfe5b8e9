-- pgmate 0.1.0, as released: kept so that databases created with it can be upgraded (and
-- the upgrade tested). Built from extension/sql/*.sql of that version.

\echo Use "CREATE EXTENSION pgmate" to load this file. \quit

-- ===================================================================== types

-- board: a position in 32 bytes (occupancy, a nibble per piece, side, castling, en
-- passant, clocks). Text form: FEN ('startpos' accepted on input).
CREATE TYPE board;
CREATE FUNCTION board_in(cstring) RETURNS board
  AS 'MODULE_PATHNAME', 'board_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_out(board) RETURNS cstring
  AS 'MODULE_PATHNAME', 'board_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_recv(internal) RETURNS board
  AS 'MODULE_PATHNAME', 'board_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_send(board) RETURNS bytea
  AS 'MODULE_PATHNAME', 'board_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE board (
  INTERNALLENGTH = 32,
  INPUT = board_in,
  OUTPUT = board_out,
  RECEIVE = board_recv,
  SEND = board_send,
  ALIGNMENT = char,
  STORAGE = plain
);
COMMENT ON TYPE board IS 'chess position; text form is FEN';

-- move: 16 bits (from, to, promotion). Text form: UCI ('e2e4', 'e7e8q', 'e1g1').
CREATE TYPE move;
CREATE FUNCTION move_in(cstring) RETURNS move
  AS 'MODULE_PATHNAME', 'move_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_out(move) RETURNS cstring
  AS 'MODULE_PATHNAME', 'move_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_recv(internal) RETURNS move
  AS 'MODULE_PATHNAME', 'move_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move_send(move) RETURNS bytea
  AS 'MODULE_PATHNAME', 'move_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE TYPE move (
  INTERNALLENGTH = 2,
  INPUT = move_in,
  OUTPUT = move_out,
  RECEIVE = move_recv,
  SEND = move_send,
  PASSEDBYVALUE,
  ALIGNMENT = int2,
  STORAGE = plain
);
COMMENT ON TYPE move IS 'chess move in UCI notation; castling and en passant are recognised from the board';

-- ===================================================================== operators and operator classes

-- board: equality, a total order (btree) and hashing
CREATE FUNCTION board_eq(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_ne(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_lt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_le(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_gt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_ge(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_cmp(board, board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION board_hash(board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = board, RIGHTARG = board, PROCEDURE = board_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS board_btree_ops DEFAULT FOR TYPE board USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 board_cmp(board, board);
CREATE OPERATOR CLASS board_hash_ops DEFAULT FOR TYPE board USING hash AS
  OPERATOR 1 =, FUNCTION 1 board_hash(board);

-- move: equality, a total order (btree) and hashing
CREATE FUNCTION move_eq(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_ne(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_lt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_le(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_gt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_ge(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_cmp(move, move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE FUNCTION move_hash(move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;
CREATE OPERATOR = (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_eq, COMMUTATOR = =, NEGATOR = <>, RESTRICT = eqsel, JOIN = eqjoinsel, HASHES, MERGES);
CREATE OPERATOR <> (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_ne, COMMUTATOR = <>, NEGATOR = =, RESTRICT = neqsel, JOIN = neqjoinsel);
CREATE OPERATOR < (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_lt, COMMUTATOR = >, NEGATOR = >=, RESTRICT = scalarltsel, JOIN = scalarltjoinsel);
CREATE OPERATOR <= (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_le, COMMUTATOR = >=, NEGATOR = >, RESTRICT = scalarlesel, JOIN = scalarlejoinsel);
CREATE OPERATOR > (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_gt, COMMUTATOR = <, NEGATOR = <=, RESTRICT = scalargtsel, JOIN = scalargtjoinsel);
CREATE OPERATOR >= (LEFTARG = move, RIGHTARG = move, PROCEDURE = move_ge, COMMUTATOR = <=, NEGATOR = <, RESTRICT = scalargesel, JOIN = scalargejoinsel);
CREATE OPERATOR CLASS move_btree_ops DEFAULT FOR TYPE move USING btree AS
  OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 move_cmp(move, move);
CREATE OPERATOR CLASS move_hash_ops DEFAULT FOR TYPE move USING hash AS
  OPERATOR 1 =, FUNCTION 1 move_hash(move);

-- ===================================================================== functions

-- Positions
CREATE FUNCTION board_key(board) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_key' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION board_key(board) IS 'Polyglot Zobrist key of the position (clocks ignored)';
CREATE FUNCTION side_to_move(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_side_to_move' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION in_check(board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_in_check' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION status(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_status' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION status(board) IS 'ongoing, checkmate, stalemate, fifty_moves or insufficient_material';
CREATE FUNCTION piece_at(board, square text) RETURNS text
  AS 'MODULE_PATHNAME', 'board_piece_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pieces(board, OUT square text, OUT piece text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_pieces' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 32;
CREATE FUNCTION play(board, move) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(board, move[]) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION play(board, text) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION play(board, text) IS 'plays a move given as SAN or UCI text';

-- Moves
CREATE FUNCTION from_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_from_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION to_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_to_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION promotion(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_promotion' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION san(board, move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_san' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION move(board, text) RETURNS move
  AS 'MODULE_PATHNAME', 'move_parse' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION move(board, text) IS 'SAN or UCI text, validated against the board';

-- Move generation
CREATE FUNCTION legal_moves(board,
    OUT move move, OUT uci text, OUT san text, OUT piece text, OUT from_square text,
    OUT to_square text, OUT captured text, OUT promotion text, OUT is_check bool, OUT is_mate bool)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_legal_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;
CREATE FUNCTION legal_move_count(board) RETURNS int
  AS 'MODULE_PATHNAME', 'board_legal_move_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION is_legal(board, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_is_legal' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION perft(board, depth int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION perft_divide(board, depth int, OUT move move, OUT nodes bigint) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_perft_divide' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;

-- ===================================================================== geometry and pictures

CREATE FUNCTION move_table(piece text DEFAULT NULL,
    OUT piece text, OUT from_square text, OUT to_square text, OUT squares_crossed int)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'geometry_move_table' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4000;
COMMENT ON FUNCTION move_table(text) IS
  'every move of a piece on an empty board (king, queen, rook, bishop, knight, white_pawn, black_pawn, castling; NULL = all); squares_crossed counts the squares strictly between';
CREATE FUNCTION move_mask(piece text, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_move_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION move_mask(text, text) IS
  '8x8 matrix (row 1 = rank 8, column 1 = file a): 1 where the piece on that square of an empty board can go';
CREATE FUNCTION attack_mask(board, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_attack_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION attack_mask(board, text) IS
  '8x8 matrix: 1 on each square the piece on that square attacks in the position (blockers included)';

CREATE FUNCTION board_diagram(board) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_diagram' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION board_svg(board, last_move move DEFAULT NULL) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_svg' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION board_svg(board, move) IS 'a self-contained SVG picture of the board, the last move highlighted';

-- ===================================================================== the worker
-- pgmate-worker batches move generation and network evaluation for every session. With
-- shared_preload_libraries = 'pgmate' a background worker starts and supervises it;
-- settings: pgmate.worker_socket, pgmate.worker_command, pgmate.worker_device,
-- pgmate.worker_timeout, pgmate.worker_autostart.

CREATE FUNCTION perft(board, depth int, device text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft_on_worker' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION perft(board, int, text) IS
  'perft on a device: ''cpu'' in this backend, ''gpu'' or ''worker'' on pgmate-worker';
CREATE FUNCTION legal_moves_batch(boards board[], OUT idx int, OUT moves move[]) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_legal_moves_batch' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
CREATE FUNCTION evaluate(boards board[], network bigint DEFAULT NULL, history board[][] DEFAULT NULL,
    OUT idx int, OUT win real, OUT draw real, OUT loss real, OUT moves move[], OUT priors real[])
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_evaluate' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION evaluate(board[], bigint, board[][]) IS
  'network evaluation on pgmate-worker: win/draw/loss for the side to move and priors over the legal moves; history is a 2-D array, one row of earlier positions (newest first) per board';
CREATE FUNCTION worker_status() RETURNS jsonb
  AS 'MODULE_PATHNAME', 'worker_status' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION worker_pid() RETURNS int
  AS 'MODULE_PATHNAME', 'supervisor_worker_pid' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION worker_pid() IS 'pid of the supervised pgmate-worker, NULL when none runs';

-- ===================================================================== games as rows

CREATE FUNCTION game_positions(start board, moves move[],
    OUT ply int, OUT board board, OUT move move, OUT san text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'game_positions' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 80;
COMMENT ON FUNCTION game_positions(board, move[]) IS
  'one row per position of a game: ply 0 is the start; move and san are the move played from it';
CREATE FUNCTION game_keys(start board, moves move[]) RETURNS bigint[]
  AS 'MODULE_PATHNAME', 'game_keys' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION game_keys(board, move[]) IS
  'Polyglot keys of every position of a game; index it with GIN to find games by position';
CREATE FUNCTION is_valid_game(start board, moves move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'game_is_valid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE SCHEMA pgmate;
COMMENT ON SCHEMA pgmate IS 'pgmate''s tables: games, openings';

CREATE TABLE pgmate.games (
  id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  source      text NOT NULL DEFAULT 'manual',      -- 'import', 'selfplay', 'manual', ...
  event       text,
  site        text,
  date        text,                                -- PGN date, e.g. '1992.11.04' or '????.??.??'
  round       text,
  white       text,
  black       text,
  result      text NOT NULL DEFAULT '*' CHECK (result IN ('1-0', '0-1', '1/2-1/2', '*')),
  termination text,
  start       board NOT NULL DEFAULT 'startpos',
  moves       move[] NOT NULL DEFAULT '{}',
  ply_count   int GENERATED ALWAYS AS (cardinality(moves)) STORED,
  tags        jsonb NOT NULL DEFAULT '{}',         -- every PGN tag, as read
  imported_at timestamptz NOT NULL DEFAULT now(),
  -- self-play metadata
  network_id  bigint,
  selfplay    jsonb,                               -- search parameters, seed, timings
  CONSTRAINT games_moves_legal CHECK (is_valid_game(start, moves))
);
COMMENT ON TABLE pgmate.games IS 'one row per game; moves are validated against the start position';
SELECT pg_catalog.pg_extension_config_dump('pgmate.games', '');
SELECT pg_catalog.pg_extension_config_dump('pgmate.games_id_seq', '');

CREATE TABLE pgmate.openings (
  id         int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  eco        text NOT NULL,
  name       text NOT NULL,
  variation  text,
  moves      move[] NOT NULL,
  ply        int NOT NULL,
  key        bigint NOT NULL                       -- Polyglot key of the final position
);
CREATE INDEX openings_key_idx ON pgmate.openings (key);
COMMENT ON TABLE pgmate.openings IS 'named opening lines (ECO), loaded by pgmate import or pgmate.import_openings()';
SELECT pg_catalog.pg_extension_config_dump('pgmate.openings', '');
SELECT pg_catalog.pg_extension_config_dump('pgmate.openings_id_seq', '');

-- The deepest named opening a game passed through (by position, so transpositions count).
CREATE FUNCTION opening(start board, moves move[], OUT eco text, OUT name text) RETURNS record
  LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$
    SELECT o.eco, o.name || coalesce(', ' || o.variation, '')
    FROM pgmate.openings o
    WHERE o.key = ANY (@extschema@.game_keys($1, $2))  -- $n: the table has a moves column too
    ORDER BY o.ply DESC, o.id
    LIMIT 1
  $$;

-- PGN in and out
CREATE FUNCTION pgn_games(pgn text, on_error text DEFAULT 'fail',
    OUT tags jsonb, OUT start board, OUT moves move[], OUT result text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'pgn_games' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgn_games(text, text) IS
  'games of a PGN text (mainline moves validated); on_error => ''skip'' leaves bad games out with a NOTICE';
CREATE FUNCTION pgn_text(tag_names text[], tag_values text[], start board, moves move[], result text)
  RETURNS text
  AS 'MODULE_PATHNAME', 'pgn_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION to_pgn(game pgmate.games) RETURNS text
  LANGUAGE sql STABLE STRICT PARALLEL SAFE
  AS $$
    SELECT @extschema@.pgn_text(coalesce(array_agg(t.key ORDER BY t.ord), '{}'),
                                coalesce(array_agg(t.value ORDER BY t.ord), '{}'),
                                game.start, game.moves, game.result)
    FROM (
      SELECT key, value, ord FROM (VALUES
          ('Event', game.event, 1), ('Site', game.site, 2), ('Date', game.date, 3),
          ('Round', game.round, 4), ('White', game.white, 5), ('Black', game.black, 6),
          ('Termination', game.termination, 7)) AS roster(key, value, ord)
        WHERE value IS NOT NULL
      UNION ALL
      SELECT key, value, 100 FROM jsonb_each_text(game.tags)
        WHERE key NOT IN ('Event', 'Site', 'Date', 'Round', 'White', 'Black', 'Result',
                          'Termination', 'SetUp', 'FEN')
    ) t
  $$;
COMMENT ON FUNCTION to_pgn(pgmate.games) IS 'the game in PGN export format';

CREATE FUNCTION pgmate.import_pgn(pgn text, on_error text DEFAULT 'fail') RETURNS bigint
  LANGUAGE sql VOLATILE STRICT
  AS $$
    WITH inserted AS (
      INSERT INTO pgmate.games (source, event, site, date, round, white, black, result,
                                termination, start, moves, tags)
      SELECT 'import', g.tags->>'Event', g.tags->>'Site', g.tags->>'Date', g.tags->>'Round',
             g.tags->>'White', g.tags->>'Black', g.result, g.tags->>'Termination',
             g.start, g.moves, g.tags
      FROM @extschema@.pgn_games(pgn, on_error) g
      RETURNING 1)
    SELECT count(*) FROM inserted
  $$;
COMMENT ON FUNCTION pgmate.import_pgn(text, text) IS 'inserts the games of a PGN text into pgmate.games; returns how many';

CREATE FUNCTION pgmate.import_openings(pgn text) RETURNS bigint
  LANGUAGE plpgsql VOLATILE STRICT
  AS $$
  DECLARE loaded bigint;
  BEGIN
    DELETE FROM pgmate.openings;
    INSERT INTO pgmate.openings (eco, name, variation, moves, ply, key)
    SELECT g.tags->>'ECO', coalesce(g.tags->>'Opening', g.tags->>'ECO'), g.tags->>'Variation',
           g.moves, cardinality(g.moves),
           @extschema@.board_key(@extschema@.play(g.start, g.moves))
    FROM @extschema@.pgn_games(pgn) g;
    GET DIAGNOSTICS loaded = ROW_COUNT;
    RETURN loaded;
  END
  $$;
COMMENT ON FUNCTION pgmate.import_openings(text) IS 'replaces pgmate.openings with the ECO lines of a PGN text (e.g. pgn-extract''s eco.pgn)';

-- Position search: "which games reached this position" answered by a GIN index over the
-- keys of every position of every game:
--   SELECT id FROM pgmate.games WHERE game_keys(start, moves) @> ARRAY[board_key('...')];
CREATE INDEX games_position_keys_idx ON pgmate.games USING gin (@extschema@.game_keys(start, moves));

-- ===================================================================== networks
CREATE TABLE pgmate.networks (
  id         bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  parent_id  bigint REFERENCES pgmate.networks (id),
  config     jsonb NOT NULL DEFAULT '{}',
  weights    bytea NOT NULL,
  notes      text
);
COMMENT ON TABLE pgmate.networks IS 'policy + WDL networks; weights as written by pgmate-worker (LibTorch archive)';
SELECT pg_catalog.pg_extension_config_dump('pgmate.networks', '');
SELECT pg_catalog.pg_extension_config_dump('pgmate.networks_id_seq', '');

CREATE FUNCTION pgmate.network_init_weights(config text, seed bigint) RETURNS bytea
  AS 'MODULE_PATHNAME', 'worker_init_weights' LANGUAGE C VOLATILE STRICT;
CREATE FUNCTION pgmate.load_network(id bigint) RETURNS bool
  AS 'MODULE_PATHNAME', 'worker_load_network' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION pgmate.load_network(bigint) IS 'makes pgmate-worker serve this network';
CREATE FUNCTION pgmate.kill_worker() RETURNS bool
  AS 'MODULE_PATHNAME', 'supervisor_kill_worker' LANGUAGE C VOLATILE STRICT;
REVOKE ALL ON FUNCTION pgmate.kill_worker() FROM PUBLIC;
COMMENT ON FUNCTION pgmate.kill_worker() IS 'kills the supervised worker (the supervisor starts a new one)';

-- A randomly initialised network: config keys filters, blocks, attention_blocks, heads,
-- se_ratio (defaults: the seed's 128 filters, 8 blocks, attention in the last 2).
CREATE FUNCTION pgmate.init_network(name text, config jsonb DEFAULT '{}', seed bigint DEFAULT 0)
  RETURNS bigint LANGUAGE sql VOLATILE
  AS $$
    INSERT INTO pgmate.networks (name, config, weights)
    VALUES (name, config, pgmate.network_init_weights(config::text, seed))
    RETURNING id
  $$;

-- Waits until the worker answers (after a server start or a restart); false on timeout.
CREATE FUNCTION pgmate.wait_for_worker(timeout interval DEFAULT '30 s') RETURNS bool
  LANGUAGE plpgsql VOLATILE STRICT
  AS $$
  DECLARE deadline timestamptz := clock_timestamp() + timeout;
  BEGIN
    LOOP
      BEGIN
        PERFORM @extschema@.worker_status();
        RETURN true;
      EXCEPTION WHEN connection_failure THEN
        IF clock_timestamp() > deadline THEN
          RETURN false;
        END IF;
        PERFORM pg_sleep(0.05);
      END;
    END LOOP;
  END
  $$;
