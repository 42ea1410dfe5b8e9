-- pgmate 0.15.0 -> 0.16.0: the learning loop's body is C++ (core/learning/loop.h); CALL
-- pgmate.learn is a C procedure over it, and the PL/pgSQL pieces only it used are gone.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.16.0'" to load this file. \quit

-- ===================================================================== dropped
-- The arena match of a round and the search path pinned per transaction: the loop's own now.
DROP PROCEDURE pgmate.learning_match(text, jsonb, jsonb, int, bigint, int, int, text, jsonb, jsonb);
DROP FUNCTION pgmate.pin_search_path();

-- ===================================================================== routines
-- Every routine of the install script, replaced (scripts/upgrade-script.py).
CREATE OR REPLACE FUNCTION board_in(cstring) RETURNS board
  AS 'MODULE_PATHNAME', 'board_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_out(board) RETURNS cstring
  AS 'MODULE_PATHNAME', 'board_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_recv(internal) RETURNS board
  AS 'MODULE_PATHNAME', 'board_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_send(board) RETURNS bytea
  AS 'MODULE_PATHNAME', 'board_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move_in(cstring) RETURNS move
  AS 'MODULE_PATHNAME', 'move_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move_out(move) RETURNS cstring
  AS 'MODULE_PATHNAME', 'move_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move_recv(internal) RETURNS move
  AS 'MODULE_PATHNAME', 'move_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move_send(move) RETURNS bytea
  AS 'MODULE_PATHNAME', 'move_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_eq(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_ne(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_lt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_le(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_gt(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_ge(board, board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_cmp(board, board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_hash(board) RETURNS int4
  AS 'MODULE_PATHNAME', 'board_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_eq(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_ne(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_lt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_le(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_gt(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_ge(move, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_cmp(move, move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_hash(move) RETURNS int4
  AS 'MODULE_PATHNAME', 'move_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_array_overlap(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_overlap' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_array_contains(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION move_array_contained(move[], move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'move_array_contained' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION board_key(board) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_key' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION side_to_move(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_side_to_move' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION in_check(board) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_in_check' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION status(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_status' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION piece_at(board, square text) RETURNS text
  AS 'MODULE_PATHNAME', 'board_piece_at' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pieces(board, OUT square text, OUT piece text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_pieces' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 32;

CREATE OR REPLACE FUNCTION play(board, move) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION play(board, move[]) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION play(board, text) RETURNS board
  AS 'MODULE_PATHNAME', 'board_play_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION from_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_from_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION to_square(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_to_square' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION promotion(move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_promotion' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION san(board, move) RETURNS text
  AS 'MODULE_PATHNAME', 'move_san' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move(board, text) RETURNS move
  AS 'MODULE_PATHNAME', 'move_parse' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION legal_moves(board,
    OUT move move, OUT uci text, OUT san text, OUT piece text, OUT from_square text,
    OUT to_square text, OUT captured text, OUT promotion text, OUT is_check bool, OUT is_mate bool)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_legal_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;

CREATE OR REPLACE FUNCTION legal_move_count(board) RETURNS int
  AS 'MODULE_PATHNAME', 'board_legal_move_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION is_legal(board, move) RETURNS bool
  AS 'MODULE_PATHNAME', 'board_is_legal' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION perft(board, depth int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION perft_divide(board, depth int, OUT move move, OUT nodes bigint) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'board_perft_divide' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 35;

CREATE OR REPLACE FUNCTION move_table(piece text DEFAULT NULL,
    OUT piece text, OUT from_square text, OUT to_square text, OUT squares_crossed int)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'geometry_move_table' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4000;

CREATE OR REPLACE FUNCTION move_mask(piece text, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_move_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION attack_mask(board, square text) RETURNS int[]
  AS 'MODULE_PATHNAME', 'geometry_attack_mask' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_diagram(board) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_diagram' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_svg(board, last_move move DEFAULT NULL) RETURNS text
  AS 'MODULE_PATHNAME', 'render_board_svg' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION perft(board, depth int, device text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'board_perft_on_worker' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION legal_moves_batch(boards board[], OUT idx int, OUT moves move[]) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_legal_moves_batch' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION evaluate(boards board[], network bigint, history board[][] DEFAULT NULL,
    repetitions int[] DEFAULT NULL,
    OUT idx int, OUT win real, OUT draw real, OUT loss real, OUT moves move[], OUT priors real[],
    OUT network_id bigint, OUT weights_sha256 bytea)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'worker_evaluate' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION worker_status() RETURNS jsonb
  AS 'MODULE_PATHNAME', 'worker_status' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION worker_pid() RETURNS int
  AS 'MODULE_PATHNAME', 'supervisor_worker_pid' LANGUAGE C VOLATILE PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION checkers_board_in(cstring) RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_board_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_board_out(checkers_board) RETURNS cstring
  AS 'MODULE_PATHNAME', 'checkers_board_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_board_recv(internal) RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_board_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_board_send(checkers_board) RETURNS bytea
  AS 'MODULE_PATHNAME', 'checkers_board_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_move_in(cstring) RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_move_out(checkers_move) RETURNS cstring
  AS 'MODULE_PATHNAME', 'checkers_move_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_move_recv(internal) RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_recv' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_move_send(checkers_move) RETURNS bytea
  AS 'MODULE_PATHNAME', 'checkers_move_send' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION checkers_board_eq(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_ne(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_lt(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_le(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_gt(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_ge(checkers_board, checkers_board) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_board_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_cmp(checkers_board, checkers_board) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_board_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_board_hash(checkers_board) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_board_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_eq(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_eq' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_ne(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_ne' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_lt(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_lt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_le(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_gt(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_gt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_ge(checkers_move, checkers_move) RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_move_ge' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_cmp(checkers_move, checkers_move) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_move_cmp' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION checkers_move_hash(checkers_move) RETURNS int4
  AS 'MODULE_PATHNAME', 'checkers_move_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF;

CREATE OR REPLACE FUNCTION side_to_move(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_side_to_move' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION status(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_status' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION play(checkers_board, checkers_move, rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION play(checkers_board, checkers_move[], rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION play(checkers_board, text, rule text DEFAULT 'any') RETURNS checkers_board
  AS 'MODULE_PATHNAME', 'checkers_play_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION move(checkers_board, text, rule text DEFAULT 'any') RETURNS checkers_move
  AS 'MODULE_PATHNAME', 'checkers_move_parse' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION legal_moves(checkers_board, rule text DEFAULT 'any',
    OUT move checkers_move, OUT notation text, OUT captures int, OUT crowns bool)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'checkers_legal_moves' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

CREATE OR REPLACE FUNCTION legal_move_count(checkers_board, rule text DEFAULT 'any') RETURNS int
  AS 'MODULE_PATHNAME', 'checkers_legal_move_count' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION is_legal(checkers_board, checkers_move, rule text DEFAULT 'any') RETURNS bool
  AS 'MODULE_PATHNAME', 'checkers_is_legal' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION perft(checkers_board, depth int, rule text DEFAULT 'any', device text DEFAULT 'cpu') RETURNS bigint
  AS 'MODULE_PATHNAME', 'checkers_perft' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE OR REPLACE FUNCTION perft_divide(checkers_board, depth int, rule text DEFAULT 'any',
    OUT move checkers_move, OUT nodes bigint) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'checkers_perft_divide' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 10;

CREATE OR REPLACE FUNCTION board_diagram(checkers_board) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_board_diagram' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION board_svg(checkers_board, last_move checkers_move DEFAULT NULL) RETURNS text
  AS 'MODULE_PATHNAME', 'checkers_board_svg' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION game_positions(start board, moves move[],
    OUT ply int, OUT board board, OUT move move, OUT san text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'game_positions' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 80;

CREATE OR REPLACE FUNCTION game_keys(start board, moves move[]) RETURNS bigint[]
  AS 'MODULE_PATHNAME', 'game_keys' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION game_hash(start board, moves move[]) RETURNS bigint
  AS 'MODULE_PATHNAME', 'game_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION material_signature(start board, moves move[]) RETURNS bigint
  AS 'MODULE_PATHNAME', 'material_signature' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION square_signature(start board, moves move[]) RETURNS bytea
  AS 'MODULE_PATHNAME', 'square_signature' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION is_valid_game(start board, moves move[]) RETURNS bool
  AS 'MODULE_PATHNAME', 'game_is_valid' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.game_speed(time_control text) RETURNS text
  AS 'MODULE_PATHNAME', 'game_speed' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION opening(start board, moves move[], OUT eco text, OUT name text) RETURNS record
  LANGUAGE sql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT o.eco, o.name || coalesce(', ' || o.variation, '')
    FROM pgmate.openings o
    WHERE o.key = ANY (@extschema@.game_keys($1, $2))  -- $n: the table has a moves column too
    ORDER BY o.ply DESC, o.id
    LIMIT 1
  $$;

CREATE OR REPLACE FUNCTION pgn_games(pgn text, on_error text DEFAULT 'fail',
    OUT tags jsonb, OUT start board, OUT moves move[], OUT result text, OUT movetext_result text,
    OUT clocks interval[], OUT evals jsonb) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'pgn_games' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgn_text(tag_names text[], tag_values text[], start board, moves move[], result text)
  RETURNS text
  AS 'MODULE_PATHNAME', 'pgn_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.pgn_tags(game pgmate.games, OUT names text[], OUT vals text[])
  LANGUAGE sql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT coalesce(array_agg(t.key ORDER BY t.ord), '{}'), coalesce(array_agg(t.value ORDER BY t.ord), '{}')
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

CREATE OR REPLACE FUNCTION to_pgn(game pgmate.games) RETURNS text
  LANGUAGE sql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT @extschema@.pgn_text(t.names, t.vals, game.start, game.moves, game.result)
    FROM pgmate.pgn_tags(game) t
  $$;

CREATE OR REPLACE FUNCTION pgmate.import_openings(pgn text) RETURNS bigint
  LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
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

CREATE OR REPLACE FUNCTION pgmate.import_duplicates_lock() RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
  BEGIN
    LOCK TABLE pgmate.import_lock IN EXCLUSIVE MODE;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.position_index_trigger() RETURNS trigger
  AS 'MODULE_PATHNAME', 'position_index_trigger' LANGUAGE C
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_index_merge(all_runs boolean DEFAULT true) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_index_merge_part(runs bigint[], part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_part' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_index_merge_publish(runs bigint[], parts bigint[], level int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_merge_publish' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_index_clean(part int, parts int) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_clean' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_index_rebuild() RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_index_rebuild' LANGUAGE C VOLATILE STRICT
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;

CREATE OR REPLACE FUNCTION pgmate.position_games(board board, max_games bigint DEFAULT NULL) RETURNS SETOF bigint
  AS 'MODULE_PATHNAME', 'position_games' LANGUAGE C STABLE PARALLEL SAFE ROWS 100;

CREATE OR REPLACE FUNCTION pgmate.position_count(board board) RETURNS bigint
  AS 'MODULE_PATHNAME', 'position_count' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.explorer(board board,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 20;

CREATE OR REPLACE FUNCTION pgmate.position_moves(board board, OUT game bigint, OUT move move, OUT result text)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'position_moves' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 100;

CREATE OR REPLACE FUNCTION pgmate.explorer(board board, filters jsonb,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8, OUT average_rating int, OUT last_played text)
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'explorer_filtered' LANGUAGE C STABLE STRICT PARALLEL SAFE ROWS 20;

CREATE OR REPLACE FUNCTION material(board) RETURNS text
  AS 'MODULE_PATHNAME', 'board_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION matches_pattern(board, pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'matches_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION reaches_material(start board, moves move[], material text) RETURNS bool
  AS 'MODULE_PATHNAME', 'reaches_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION reaches_pattern(start board, moves move[], pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'reaches_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION may_reach_material(signature bigint, material text) RETURNS bool
  AS 'MODULE_PATHNAME', 'may_reach_material' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.game_reaches_material(game pgmate.games, material text) RETURNS bool
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT @extschema@.may_reach_material(game.material_signature, material)
           AND @extschema@.reaches_material(game.start, game.moves, material) $$;

CREATE OR REPLACE FUNCTION may_match_pattern(signature bytea, pattern text) RETURNS bool
  AS 'MODULE_PATHNAME', 'may_match_pattern' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.game_reaches_pattern(game pgmate.games, pattern text) RETURNS bool
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT @extschema@.may_match_pattern(game.square_signature, pattern)
           AND @extschema@.reaches_pattern(game.start, game.moves, pattern) $$;

CREATE OR REPLACE PROCEDURE pgmate.selfplay(games int, simulations int, network bigint DEFAULT NULL,
                                 parallel int DEFAULT 8, options jsonb DEFAULT '{}')
  LANGUAGE C AS 'MODULE_PATHNAME', 'selfplay_procedure';

CREATE OR REPLACE FUNCTION pgmate.visit_policy(visits int[]) RETURNS real[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT array_agg((u.v / u.n)::real ORDER BY u.i)
    FROM (SELECT w.v, w.i, sum(w.v) OVER ()::float8 AS n FROM unnest(visits) WITH ORDINALITY AS w(v, i)) u
    WHERE u.n > 0
  $$;

CREATE OR REPLACE FUNCTION pgmate.policy_disagreement(visits int[], priors real[]) RETURNS float8
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT 0.5 * sum(abs(u.v / u.n - u.p))
    FROM (SELECT w.v, w.p, sum(w.v) OVER ()::float8 AS n FROM unnest(visits, priors) AS w(v, p)) u
    WHERE u.n > 0
    HAVING count(u.v) = count(u.p)
  $$;

CREATE OR REPLACE FUNCTION pgmate.selfplay_lengths(bucket int DEFAULT 20)
  RETURNS TABLE (network_id bigint, from_ply int, to_ply int, games bigint, bar text)
  LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  BEGIN
    IF bucket < 1 THEN
      RAISE EXCEPTION 'bucket must be at least 1 ply, not %', bucket USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
      WITH counted AS (
        SELECT g.network_id, g.ply_count / bucket AS slot, count(*) AS n
        FROM pgmate.games g
        WHERE g.source = 'selfplay'
        GROUP BY g.network_id, g.ply_count / bucket),
      ranges AS (
        SELECT c.network_id, min(c.slot) AS lo, max(c.slot) AS hi, max(c.n) AS most
        FROM counted c
        GROUP BY c.network_id)
      SELECT r.network_id, s * bucket, least(s::bigint * bucket + bucket - 1, 2147483647)::int,
             coalesce(c.n, 0), repeat('#', ceil(40.0 * coalesce(c.n, 0) / r.most)::int)
      FROM ranges r
      CROSS JOIN LATERAL generate_series(r.lo, r.hi) AS s
      LEFT JOIN counted c ON c.network_id IS NOT DISTINCT FROM r.network_id AND c.slot = s
      ORDER BY r.network_id NULLS FIRST, s;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.search_wdl(q real, d real) RETURNS real[]
  AS 'MODULE_PATHNAME', 'search_wdl' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION without_clocks(board) RETURNS board
  AS 'MODULE_PATHNAME', 'board_without_clocks' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.eval_row_problem(pos board, score_cp int, mate int, best_move move, pv move[], lines jsonb)
  RETURNS text
  AS 'MODULE_PATHNAME', 'eval_row_problem' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.eval_row_believable(pos board, score_cp int, mate int, best_move move, pv move[], lines jsonb)
  RETURNS bool
  AS 'MODULE_PATHNAME', 'eval_row_believable' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.eval_writer_rank(writer regrole) RETURNS int
  AS 'MODULE_PATHNAME', 'eval_writer_rank' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.position_evals_writer() RETURNS trigger
  LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
  AS $$
    BEGIN
      -- (pgmate.acting_role() written out: this runs for every row an import stores)
      IF NEW.writer IS NULL
         OR NOT pg_has_role(CURRENT_USER, (SELECT c.relowner FROM pg_class c WHERE c.oid = TG_RELID), 'USAGE') THEN
        NEW.writer := to_regrole(quote_ident(CURRENT_USER));
      END IF;
      RETURN NEW;
    END
  $$;

CREATE OR REPLACE FUNCTION pgmate.eval_cp(score_cp int, mate int) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN mate IS NOT NULL THEN CASE WHEN mate OPERATOR(pg_catalog.>) 0 THEN 1000 ELSE -1000 END
                    ELSE greatest(-1000, least(1000, score_cp)) END $$;

CREATE OR REPLACE FUNCTION pgmate.win_percent(cp int) RETURNS float8
  AS 'MODULE_PATHNAME', 'analysis_win_percent' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.move_accuracy(win_before float8, win_after float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'analysis_move_accuracy' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.move_class(chances_lost float8) RETURNS text
  AS 'MODULE_PATHNAME', 'analysis_move_class' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.move_judgement(cp_before int, mate_before int, cp_after int, mate_after int) RETURNS text
  AS 'MODULE_PATHNAME', 'analysis_move_judgement' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.accuracy_of_game(cps int[], white_first bool,
    OUT side text, OUT accuracy float8, OUT acpl float8, OUT moves int) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'analysis_accuracy_of_game' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 2;

CREATE OR REPLACE FUNCTION pgmate.player_accuracy(games bigint[] DEFAULT NULL,
    OUT player text, OUT engine text, OUT limits text, OUT games bigint, OUT moves bigint,
    OUT accuracy float8, OUT acpl float8, OUT inaccuracies bigint, OUT mistakes bigint, OUT blunders bigint)
  RETURNS SETOF record
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT CASE a.side WHEN 'white' THEN g.white ELSE g.black END, a.engine, a.limits,
           count(*), sum(a.moves), avg(a.accuracy), sum(a.acpl * a.moves) / sum(a.moves),
           sum(a.inaccuracies), sum(a.mistakes), sum(a.blunders)
    FROM pgmate.game_accuracy a
    JOIN pgmate.games g ON g.id = a.game
    WHERE a.complete AND ($1 IS NULL OR a.game = ANY ($1))
    GROUP BY 1, 2, 3
  $$;

CREATE OR REPLACE FUNCTION pgmate.analysis_positions(game_ids bigint[], engine text, limits text) RETURNS SETOF board
  LANGUAGE sql STABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT q.board FROM (
      SELECT DISTINCT ON (x.key, x.position) p.board, g.id, p.ply
      FROM pgmate.games g
      CROSS JOIN LATERAL @extschema@.game_positions(g.start, g.moves) p
      CROSS JOIN LATERAL (SELECT @extschema@.board_key(p.board) AS key, @extschema@.without_clocks(p.board) AS position) x
      WHERE g.id = ANY (game_ids)
        AND NOT EXISTS (SELECT 1 FROM pgmate.visible_evals e
                        WHERE e.key = x.key AND e.position OPERATOR(@extschema@.=) x.position AND e.engine = $2 AND e.limits = $3)
      ORDER BY x.key, x.position, g.id, p.ply) q
    ORDER BY q.id, q.ply
  $$;

CREATE OR REPLACE FUNCTION pgmate.save_position_evals(engine text, limits text, evals jsonb) RETURNS bigint
  LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
  AS $$
    WITH saved AS (
      INSERT INTO pgmate.position_evals AS e (key, position, engine, limits, score_cp, mate, win, draw, loss,
                                             wdl_source, best_move, pv, depth, nodes, lines)
      SELECT @extschema@.board_key(r.board), @extschema@.without_clocks(r.board), $1, $2, r.cp, r.mate,
             r.win, r.draw, r.loss, r.wdl_source, r.best, string_to_array(r.pv, ' ')::@extschema@.move[],
             r.depth, r.nodes, r.lines
      FROM jsonb_to_recordset(evals) AS r(board @extschema@.board, cp int, mate int, win smallint, draw smallint,
                                          loss smallint, wdl_source text, best @extschema@.move, pv text,
                                          depth int, nodes bigint, lines jsonb)
      -- in key order: sessions storing the same positions at once (an import's connections,
      -- parallel analyses) then wait for each other in one order, never in a cycle
      ORDER BY 1
      ON CONFLICT (key, position, engine, limits, writer) DO NOTHING
      RETURNING 1)
    SELECT count(*) FROM saved
  $$;

CREATE OR REPLACE PROCEDURE pgmate.analyse(games text, engine jsonb, options jsonb DEFAULT '{}')
  AS 'MODULE_PATHNAME', 'analyse_procedure' LANGUAGE C;

CREATE OR REPLACE FUNCTION pgn_text(tag_names text[], tag_values text[], start board, moves move[], result text,
                         suffixes text[], comments text[]) RETURNS text
  AS 'MODULE_PATHNAME', 'pgn_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.pgn_eval_text(score_cp int, mate int, side text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT CASE WHEN mate IS NOT NULL THEN
                  CASE WHEN mate <> 0 THEN '#' || (CASE side WHEN 'white' THEN mate ELSE -mate END) END
                ELSE to_char((CASE side WHEN 'white' THEN score_cp ELSE -score_cp END) / 100.0, 'FM9999990.00') END
  $$;

CREATE OR REPLACE FUNCTION pgmate.to_pgn_with_evals(game pgmate.games, engine text DEFAULT NULL, limits text DEFAULT NULL)
  RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    WITH chosen AS (
      SELECT e.engine, e.limits
      FROM pgmate.visible_evals e
      WHERE e.key = ANY (@extschema@.game_keys(game.start, game.moves))
        AND ($2 IS NULL OR e.engine = $2) AND ($3 IS NULL OR e.limits = $3)
      GROUP BY e.engine, e.limits
      ORDER BY count(*) DESC, e.engine = 'pgn', e.engine, e.limits
      LIMIT 1),
    notes AS (
      SELECT array_agg(coalesce(CASE m.class WHEN 'inaccuracy' THEN '?!' WHEN 'mistake' THEN '?'
                                             WHEN 'blunder' THEN '??' END, '') ORDER BY p.ply) AS suffixes,
             array_agg(concat_ws(' ',
                 '[%eval ' || pgmate.pgn_eval_text(e.score_cp, e.mate, @extschema@.side_to_move(p.board)) || ']',
                 '[%clk ' || to_char(game.clocks[p.ply], 'FMHH24:MI:SS') || ']',
                 initcap(m.class) || '.' || coalesce(' ' || m.best_san || ' was best.', ''))
               ORDER BY p.ply) AS comments
      FROM @extschema@.game_positions(game.start, game.moves) p
      LEFT JOIN chosen c ON true
      LEFT JOIN pgmate.visible_evals e
        ON e.key = @extschema@.board_key(p.board) AND e.position OPERATOR(@extschema@.=) @extschema@.without_clocks(p.board)
           AND e.engine = c.engine AND e.limits = c.limits
      LEFT JOIN pgmate.move_evals m
        ON m.game = game.id AND m.ply = p.ply AND m.engine = c.engine AND m.limits = c.limits
      WHERE p.ply >= 1)
    SELECT @extschema@.pgn_text(t.names, t.vals, game.start, game.moves, game.result,
                                coalesce(n.suffixes, '{}'), coalesce(n.comments, '{}'))
    FROM notes n, pgmate.pgn_tags(game) t
  $$;

CREATE OR REPLACE FUNCTION pgmate.import_pgn(pgn text, on_error text DEFAULT 'fail') RETURNS bigint
  LANGUAGE sql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
  AS $$
    WITH parsed AS MATERIALIZED (
      SELECT * FROM @extschema@.pgn_games(pgn, on_error)),
    inserted AS (
      INSERT INTO pgmate.games (source, event, site, date, round, white, black, result,
                                termination, start, moves, tags, movetext_result, clocks)
      SELECT 'import', g.tags->>'Event', g.tags->>'Site', g.tags->>'Date', g.tags->>'Round',
             g.tags->>'White', g.tags->>'Black', g.result, g.tags->>'Termination',
             g.start, g.moves, g.tags, g.movetext_result, g.clocks
      FROM parsed g
      RETURNING 1),
    -- the [%eval] comments, as the evaluations of engine 'pgn'
    evals AS (
      SELECT pgmate.save_position_evals('pgn', '', jsonb_agg(e)) AS saved
      FROM parsed g, jsonb_array_elements(g.evals) e)
    SELECT count(*) FROM inserted WHERE (SELECT count(*) FROM evals) >= 0
  $$;

CREATE OR REPLACE FUNCTION pgmate.network_init_weights(config text, seed bigint) RETURNS bytea
  AS 'MODULE_PATHNAME', 'worker_init_weights' LANGUAGE C VOLATILE STRICT;

CREATE OR REPLACE FUNCTION pgmate.load_network(id bigint) RETURNS bool
  AS 'MODULE_PATHNAME', 'worker_load_network' LANGUAGE C VOLATILE STRICT;

CREATE OR REPLACE FUNCTION pgmate.kill_worker() RETURNS bool
  AS 'MODULE_PATHNAME', 'supervisor_kill_worker' LANGUAGE C VOLATILE STRICT;

CREATE OR REPLACE FUNCTION pgmate.weights_config(weights bytea) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL RESTRICTED SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE
    header_length bigint;
  BEGIN
    -- safetensors: an 8-byte little-endian header length, then the JSON header.
    IF length(weights) < 8 OR get_byte(weights, 4) <> 0 OR get_byte(weights, 5) <> 0
       OR get_byte(weights, 6) <> 0 OR get_byte(weights, 7) <> 0 THEN
      RETURN NULL;
    END IF;
    header_length := get_byte(weights, 0)::bigint + (get_byte(weights, 1)::bigint << 8)
                     + (get_byte(weights, 2)::bigint << 16) + (get_byte(weights, 3)::bigint << 24);
    IF header_length > length(weights) - 8 THEN
      RETURN NULL;
    END IF;
    RETURN (convert_from(substring(weights FROM 9 FOR header_length::int), 'UTF8')::jsonb
            -> '__metadata__' ->> 'pgmate_config')::jsonb;
  EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
    RETURN NULL;  -- not UTF-8, not JSON, or nested past the parser's stack (54001)
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.init_network(name text, config jsonb DEFAULT '{}', seed bigint DEFAULT 0)
  RETURNS bigint LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
    WITH made AS (SELECT pgmate.network_init_weights(init_network.config::text, init_network.seed) AS weights)
    INSERT INTO pgmate.networks (name, config, weights)
    SELECT init_network.name, pgmate.weights_config(made.weights), made.weights FROM made
    RETURNING id
  $$;

CREATE OR REPLACE FUNCTION pgmate.shipped_network(name text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'shipped_network_file' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.install_network(name text DEFAULT 'default') RETURNS bigint
  LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE
    file bytea := pgmate.shipped_network(name);
    config jsonb;
    found bigint;
  BEGIN
    -- One installer at a time: two calls never make two rows.
    LOCK TABLE pgmate.networks IN SHARE ROW EXCLUSIVE MODE;
    SELECT n.id INTO found FROM pgmate.networks n WHERE n.weights_sha256 = sha256(file) ORDER BY n.id LIMIT 1;
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
    config := pgmate.weights_config(file);
    IF config IS NULL THEN
      RAISE EXCEPTION 'shipped network % has no pgmate_config in its metadata', name
        USING ERRCODE = 'data_corrupted';
    END IF;
    INSERT INTO pgmate.networks (name, config, weights, notes)
    VALUES ('pgmate ' || name, config, file,
            'shipped with pgmate ' || (SELECT extversion FROM pg_extension WHERE extname = 'pgmate')
            || ' (networks/README.md of its sources)')
    RETURNING id INTO found;
    RETURN found;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.wait_for_worker(timeout interval DEFAULT '30 s') RETURNS bool
  LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
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

CREATE OR REPLACE FUNCTION pgmate.acting_role() RETURNS regrole
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER)) $$;

CREATE OR REPLACE FUNCTION pgmate.login_role() RETURNS regrole
  AS 'MODULE_PATHNAME', 'login_role' LANGUAGE C STABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.session_is_working(pid int, backend_start timestamptz, since timestamptz) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT pid IS NOT NULL AND EXISTS (
      SELECT 1 FROM pg_stat_activity a
      WHERE a.pid = session_is_working.pid AND a.backend_start = session_is_working.backend_start
        AND (since IS NULL OR a.state IS DISTINCT FROM 'idle' AND a.query_start <= since))
  $$;

CREATE OR REPLACE FUNCTION pgmate.client_claim(name text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    me_start timestamptz := (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid());
  BEGIN
    IF length(client_claim.name) > 200 THEN
      RAISE EXCEPTION 'a client claim''s name has at most 200 characters, not %', length(client_claim.name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Claims of sessions that ended are gone: the table holds at most the live sessions' claims.
    DELETE FROM pgmate.client_claims c
    WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                      WHERE a.pid = c.holder_pid AND a.backend_start = c.holder_backend_start);
    INSERT INTO pgmate.client_claims AS c (owner, name, holder_pid, holder_backend_start)
    VALUES (session_user, client_claim.name, pg_backend_pid(), me_start)
    ON CONFLICT (owner, name) DO UPDATE SET holder_pid = excluded.holder_pid,
                                            holder_backend_start = excluded.holder_backend_start
      WHERE c.holder_pid = excluded.holder_pid AND c.holder_backend_start = excluded.holder_backend_start
         OR NOT pgmate.session_is_working(c.holder_pid, c.holder_backend_start, NULL);
    RETURN FOUND;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.player_spec(spec text) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'arena_player_spec' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.elo(wins bigint, draws bigint, losses bigint,
                           OUT games bigint, OUT score float8, OUT draw_ratio float8, OUT elo float8,
                           OUT elo_lower float8, OUT elo_upper float8, OUT los float8)
  AS 'MODULE_PATHNAME', 'arena_elo' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.pentanomial_elo(ll bigint, ld bigint, dd_wl bigint, wd bigint, ww bigint,
                                       OUT games bigint, OUT score float8, OUT draw_ratio float8, OUT elo float8,
                                       OUT elo_lower float8, OUT elo_upper float8, OUT los float8)
  AS 'MODULE_PATHNAME', 'arena_pentanomial_elo' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.sprt(ll bigint, ld bigint, dd_wl bigint, wd bigint, ww bigint, elo0 float8, elo1 float8,
                            alpha float8 DEFAULT 0.05, beta float8 DEFAULT 0.05,
                            OUT llr float8, OUT lower_bound float8, OUT upper_bound float8, OUT verdict text)
  AS 'MODULE_PATHNAME', 'arena_sprt' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.ratings(anchor jsonb DEFAULT '"random"', anchor_elo float8 DEFAULT 0)
  RETURNS TABLE (player jsonb, name text, elo float8, elo_stderr float8, games bigint, points float8)
  AS 'MODULE_PATHNAME', 'arena_ratings' LANGUAGE C STABLE STRICT;

CREATE OR REPLACE PROCEDURE pgmate.arena(a jsonb, b jsonb, games int, options jsonb DEFAULT '{}')
  LANGUAGE C AS 'MODULE_PATHNAME', 'arena_procedure';

CREATE OR REPLACE FUNCTION pgmate.network_accuracy(network bigint, data text, OUT positions bigint, OUT top1 float8,
                                        OUT policy_cross_entropy float8, OUT wdl_cross_entropy float8)
  AS 'MODULE_PATHNAME', 'network_accuracy' LANGUAGE C VOLATILE STRICT;

CREATE OR REPLACE FUNCTION pgmate.is_own_training_run(run bigint) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT EXISTS (SELECT 1 FROM pgmate.training_runs r WHERE r.id = run AND r.owner = pgmate.acting_role()) $$;

CREATE OR REPLACE FUNCTION pgmate.training_samples(data text) RETURNS SETOF bytea
  AS 'MODULE_PATHNAME', 'training_samples' LANGUAGE C VOLATILE STRICT;

CREATE OR REPLACE FUNCTION pgmate.training_begin(network bigint, data text, steps bigint, settings jsonb, samples bigint,
                                      data_sha256 text, session_lease boolean DEFAULT false,
                                      OUT run bigint, OUT resumed bool, OUT step bigint,
                                      OUT state bytea, OUT data_changed bool)
  LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE candidate record;
          me_start timestamptz := (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid());
  BEGIN
    resumed := false;
    data_changed := false;
    FOR candidate IN
      SELECT r.id, r.data_sha256, r.samples, r.holder_pid, r.holder_backend_start, r.holder_since
      FROM pgmate.training_runs r
      WHERE r.network_id = network AND r.data = training_begin.data AND r.steps = training_begin.steps
        AND r.settings = training_begin.settings AND r.status = 'running' AND r.owner = pgmate.acting_role()
      ORDER BY r.id DESC
    LOOP
      CONTINUE WHEN pgmate.session_is_working(candidate.holder_pid, candidate.holder_backend_start,
                                              candidate.holder_since);
      -- taken only if no other session took it meanwhile (the row lock orders the two)
      UPDATE pgmate.training_runs r
      SET samples = training_begin.samples, data_sha256 = training_begin.data_sha256,
          holder_pid = pg_backend_pid(), holder_backend_start = me_start,
          holder_since = CASE WHEN NOT session_lease THEN clock_timestamp() END
      WHERE r.id = candidate.id AND r.status = 'running'
        AND r.holder_pid IS NOT DISTINCT FROM candidate.holder_pid
        AND r.holder_backend_start IS NOT DISTINCT FROM candidate.holder_backend_start
        AND r.holder_since IS NOT DISTINCT FROM candidate.holder_since;
      CONTINUE WHEN NOT FOUND;
      run := candidate.id;
      resumed := true;
      data_changed := candidate.data_sha256 <> training_begin.data_sha256;
      SELECT c.step, c.state INTO step, state FROM pgmate.training_checkpoints c
      WHERE c.run_id = run ORDER BY c.step DESC LIMIT 1;
      RETURN;
    END LOOP;
    INSERT INTO pgmate.training_runs (network_id, data, steps, settings, samples, data_sha256,
                                      holder_pid, holder_backend_start, holder_since)
    VALUES (network, data, steps, settings, samples, data_sha256, pg_backend_pid(), me_start,
            CASE WHEN NOT session_lease THEN clock_timestamp() END)
    RETURNING id INTO run;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.training_record(run bigint, step bigint, samples bigint, policy_loss float8,
                                       value_loss float8, kl float8, accuracy float8, lr float8, kl_weight float8,
                                       samples_per_s float8, holdout_positions bigint, holdout_top1 float8,
                                       holdout_policy_loss float8, holdout_value_loss float8)
  RETURNS void LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
    INSERT INTO pgmate.training_progress AS p VALUES
      (run, step, samples, policy_loss, value_loss, kl, accuracy, lr, kl_weight, samples_per_s, holdout_positions,
       holdout_top1, holdout_policy_loss, holdout_value_loss, now())
    ON CONFLICT (run_id, step) DO UPDATE SET
      samples = excluded.samples, policy_loss = excluded.policy_loss, value_loss = excluded.value_loss,
      kl = excluded.kl, accuracy = excluded.accuracy, lr = excluded.lr, kl_weight = excluded.kl_weight,
      samples_per_s = excluded.samples_per_s, holdout_positions = excluded.holdout_positions,
      holdout_top1 = excluded.holdout_top1, holdout_policy_loss = excluded.holdout_policy_loss,
      holdout_value_loss = excluded.holdout_value_loss, logged_at = excluded.logged_at
  $$;

CREATE OR REPLACE FUNCTION pgmate.training_checkpoint(run bigint, step bigint, state bytea) RETURNS void
  LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
    DELETE FROM pgmate.training_checkpoints c WHERE c.run_id = run AND c.step <> training_checkpoint.step;
    INSERT INTO pgmate.training_checkpoints (run_id, step, state) VALUES (run, step, state)
    ON CONFLICT (run_id, step) DO UPDATE SET state = excluded.state, created_at = now();
    UPDATE pgmate.training_runs SET steps_done = step WHERE id = run;
  $$;

CREATE OR REPLACE FUNCTION pgmate.training_optimizer(run bigint) RETURNS bytea
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE state bytea;
  BEGIN
    SELECT c.state INTO state FROM pgmate.training_checkpoints c WHERE c.run_id = run ORDER BY c.step DESC LIMIT 1;
    IF state IS NULL THEN
      RAISE EXCEPTION 'optimizer_from: training run % %', run,
        CASE WHEN EXISTS (SELECT 1 FROM pgmate.training_runs r WHERE r.id = run) THEN 'has no checkpoint'
             ELSE 'not found' END
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN state;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.training_finish(run bigint, name text, weights bytea, state bytea) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE r pgmate.training_runs;
          new_id bigint;
  BEGIN
    SELECT * INTO STRICT r FROM pgmate.training_runs WHERE id = run;
    INSERT INTO pgmate.networks (name, parent_id, config, weights, training)
    SELECT training_finish.name, n.id, n.config, training_finish.weights,
           jsonb_build_object('run', r.id, 'data', r.data, 'steps', r.steps, 'samples', r.samples,
                              'data_sha256', r.data_sha256, 'settings', r.settings)
    FROM pgmate.networks n WHERE n.id = r.network_id
    RETURNING id INTO new_id;
    PERFORM pgmate.training_checkpoint(run, r.steps, state);
    UPDATE pgmate.training_runs SET status = 'finished', new_network = new_id, finished_at = now(), error = NULL,
           holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL
    WHERE id = run;
    RETURN new_id;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.training_fail(run bigint, error text) RETURNS void
  LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
    UPDATE pgmate.training_runs SET status = 'failed', error = training_fail.error, finished_at = now(),
           holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL
    WHERE id = run;
  $$;

CREATE OR REPLACE PROCEDURE pgmate.train(network bigint, data text, steps bigint, options jsonb DEFAULT '{}',
                              INOUT new_network bigint DEFAULT NULL)
  AS 'MODULE_PATHNAME', 'train_procedure' LANGUAGE C;

CREATE OR REPLACE FUNCTION pgmate.training_chart(network bigint, width int DEFAULT 720, height int DEFAULT 360) RETURNS text
  AS 'MODULE_PATHNAME', 'training_chart' LANGUAGE C STABLE STRICT;

CREATE OR REPLACE FUNCTION pgmate.is_own_learning_run(run bigint) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT EXISTS (SELECT 1 FROM pgmate.learning_runs r WHERE r.id = run AND r.owner = pgmate.acting_role()) $$;

CREATE OR REPLACE FUNCTION pgmate.learning_game(label text, game bigint) RETURNS void
  LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE
    parts text[] := regexp_match(label, '^learn:([0-9]{1,18}):([0-9]{1,9})$');
  BEGIN
    IF parts IS NULL THEN
      RETURN;
    END IF;
    IF NOT pgmate.is_own_learning_run(parts[1]::bigint) THEN
      RAISE EXCEPTION 'self-play label "%" is reserved for learning run % of its owner', label, parts[1]
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Labels learn:RUN:ITERATION are the learning loop''s; choose another "run" option.';
    END IF;
    IF game IS NOT NULL THEN
      INSERT INTO pgmate.learning_games (run_id, iteration, game_id) VALUES (parts[1]::bigint, parts[2]::int, game);
    END IF;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_settings(given jsonb, stored jsonb DEFAULT NULL) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'learning_settings' LANGUAGE C STABLE;

CREATE OR REPLACE FUNCTION pgmate.learning_device_defaults(settings jsonb, given jsonb, device text) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'learning_device_defaults' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.learning_option_list(OUT "position" int, OUT name text, OUT kind text, OUT low text,
                                            OUT high text, OUT choices text[], OUT default_value text,
                                            OUT per_call boolean, OUT description text)
  RETURNS SETOF record AS 'MODULE_PATHNAME', 'learning_option_list' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.learning_gate(best jsonb, vetoes jsonb[], settings jsonb) RETURNS text
  AS 'MODULE_PATHNAME', 'learning_gate' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.learning_reason(best jsonb, older jsonb, older_network bigint, start jsonb, settings jsonb)
  RETURNS text AS 'MODULE_PATHNAME', 'learning_reason' LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.learning_escalation(level int, pretrain_mix float8, lr float8, current_share float8,
                                           OUT exclude_share float8, OUT new_pretrain_mix float8,
                                           OUT new_lr float8, OUT new_current_share float8)
  AS 'MODULE_PATHNAME', 'learning_escalation' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OR REPLACE FUNCTION pgmate.own_learning_run(run bigint) RETURNS pgmate.learning_runs
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE r pgmate.learning_runs;
  BEGIN
    SELECT * INTO r FROM pgmate.learning_runs WHERE id = run;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'learning run % not found', run USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF r.owner <> pgmate.acting_role() THEN
      RAISE EXCEPTION 'learning run % belongs to role %: only it may read the run''s training rows', run, r.owner
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF pgmate.login_role() IS DISTINCT FROM r.owner THEN
      RAISE EXCEPTION 'learning run %: this session logged in as %, not as its owner %: the run''s stored queries run only in a session its owner logged in to',
        run, pgmate.login_role(), r.owner
        USING ERRCODE = 'insufficient_privilege', HINT = 'Connect as ' || r.owner || '.';
    END IF;
    RETURN r;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_window(run bigint, iteration int)
  RETURNS TABLE (game_id bigint, ply int, board board, history board[], repetitions int, moves move[],
                 policy real[], wdl real[])
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    r pgmate.learning_runs;
    s jsonb;
    q_ratio float8;
  BEGIN
    r := pgmate.own_learning_run(run);
    s := r.settings;
    q_ratio := CASE s->>'value_target' WHEN 'z' THEN 0 WHEN 'q' THEN 1 ELSE (s->>'q_ratio')::float8 END;
    RETURN QUERY
      SELECT t.game_id, t.ply, t.board, t.history, t.repetitions, t.moves, t.policy,
             CASE WHEN q_ratio = 0 THEN t.wdl
                  ELSE ARRAY[(1 - q_ratio) * t.wdl[1] + q_ratio * sw.w[1],
                             (1 - q_ratio) * t.wdl[2] + q_ratio * sw.w[2],
                             (1 - q_ratio) * t.wdl[3] + q_ratio * sw.w[3]]::real[] END
      FROM pgmate.training_targets t
      CROSS JOIN LATERAL (SELECT pgmate.search_wdl(t.q, t.d) AS w) sw
      WHERE t.game_id IN (SELECT lg.game_id FROM pgmate.learning_games lg
                          WHERE lg.run_id = run AND lg.iteration <= learning_window.iteration
                            AND NOT EXISTS (SELECT 1 FROM pgmate.learning_exclusions e
                                            WHERE e.run_id = run AND e.game_id = lg.game_id))
        AND t.full_search
        AND ((s->>'sample_one_in')::int = 1
             OR abs(hashint8(t.game_id * 4096 + t.ply + (s->>'seed')::bigint)) % (s->>'sample_one_in')::int = 0)
      ORDER BY t.game_id DESC, t.ply
      LIMIT (s->>'window')::bigint;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_iteration_mix(run bigint, iteration int, current_mix float8) RETURNS float8
  LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT coalesce((SELECT i.pretrain_mix FROM pgmate.learning_iterations i
                         WHERE i.run_id = run AND i.iteration = learning_iteration_mix.iteration), current_mix) $$;

CREATE OR REPLACE FUNCTION pgmate.learning_pretrain_rows(window_rows bigint, mix float8) RETURNS bigint
  LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT CASE WHEN mix > 0 THEN floor(window_rows * mix / (1 - mix))::bigint ELSE 0 END $$;

CREATE OR REPLACE FUNCTION pgmate.learning_pretrain_query(settings jsonb, run bigint, iteration int, pretrain_rows bigint)
  RETURNS text LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT format(
      'SELECT p.board, p.history, p.repetitions::pg_catalog.int4, p.played, NULL::%1$s.move[], NULL::pg_catalog.float4[], '
      'p.wdl::pg_catalog.float4[] FROM (%2$s) p '
      'ORDER BY pg_catalog.hashtext(pg_catalog.textcat(p.board::pg_catalog.text, %3$L)), '
      'p.played::pg_catalog.text, p.wdl::pg_catalog.text LIMIT %4$s',
      '@extschema@', settings->>'pretrain_data', ':' || run || ':' || iteration, pretrain_rows)
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_data(run bigint, iteration int)
  RETURNS TABLE (board board, history board[], repetitions int, played move, moves move[], policy real[], wdl real[])
  LANGUAGE plpgsql STABLE
  
  
  AS $$
  #variable_conflict use_column
  DECLARE
    r pgmate.learning_runs;
    window_rows pg_catalog.int8;
    mix pg_catalog.float8;
    pretrain_rows pg_catalog.int8;
  BEGIN
    -- The run's pretrain_data is its owner's query: it runs with its owner's rights only,
    -- in a session its owner logged in to.
    r := pgmate.own_learning_run(run);
    -- the iteration's own pretraining share: as it was when the iteration began
    mix := pgmate.learning_iteration_mix(run, iteration, r.pretrain_mix);
    RETURN QUERY
      SELECT w.board, w.history, w.repetitions, NULL::@extschema@.move, w.moves, w.policy, w.wdl
      FROM pgmate.learning_window(run, iteration) w
      ORDER BY w.game_id DESC, w.ply;
    GET DIAGNOSTICS window_rows = ROW_COUNT;
    pretrain_rows := pgmate.learning_pretrain_rows(window_rows, mix);
    IF pretrain_rows OPERATOR(pg_catalog.>) 0 THEN
      RETURN QUERY EXECUTE pgmate.learning_pretrain_query(r.settings, run, iteration, pretrain_rows);
    END IF;
  END
  $$;

CREATE OR REPLACE PROCEDURE pgmate.learn(run text, iterations int, options jsonb DEFAULT '{}')
  LANGUAGE C AS 'MODULE_PATHNAME', 'learn_procedure';

CREATE OR REPLACE FUNCTION pgmate.learning_run_id(name text) RETURNS bigint
  LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
  AS $$
  DECLARE
    found bigint;
    others int;
  BEGIN
    SELECT r.id INTO found FROM pgmate.learning_runs r WHERE r.name = learning_run_id.name AND r.owner = pgmate.acting_role();
    IF found IS NOT NULL THEN
      RETURN found;
    END IF;
    SELECT min(r.id), count(*) INTO found, others FROM pgmate.learning_runs r WHERE r.name = learning_run_id.name;
    IF others > 1 THEN
      RAISE EXCEPTION 'learning run "%" is ambiguous: roles % each have one', name,
        (SELECT string_agg(r.owner::text, ', ' ORDER BY r.owner::text) FROM pgmate.learning_runs r
         WHERE r.name = learning_run_id.name)
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Ask as the owner of the run you mean.';
    END IF;
    RETURN found;
  END
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_chart(run text, width int DEFAULT 720, height int DEFAULT 360) RETURNS text
  AS 'MODULE_PATHNAME', 'learning_chart' LANGUAGE C STABLE STRICT;

COMMENT ON FUNCTION board_key(board) IS 'Polyglot Zobrist key of the position (clocks ignored)';

COMMENT ON FUNCTION status(board) IS 'ongoing, checkmate, stalemate, fifty_moves or insufficient_material';

COMMENT ON FUNCTION play(board, text) IS 'plays a move given as SAN or UCI text';

COMMENT ON FUNCTION move(board, text) IS 'SAN or UCI text, validated against the board';

COMMENT ON FUNCTION move_table(text) IS
  'every move of a piece on an empty board (king, queen, rook, bishop, knight, white_pawn, black_pawn, castling; NULL = all); squares_crossed counts the squares strictly between';

COMMENT ON FUNCTION move_mask(text, text) IS
  '8x8 matrix (row 1 = rank 8, column 1 = file a): 1 where the piece on that square of an empty board can go';

COMMENT ON FUNCTION attack_mask(board, text) IS
  '8x8 matrix: 1 on each square the piece on that square attacks in the position (blockers included)';

COMMENT ON FUNCTION board_svg(board, move) IS 'a self-contained SVG picture of the board, the last move highlighted';

COMMENT ON FUNCTION perft(board, int, text) IS
  'perft on a device: ''cpu'' in this backend, ''gpu'' or ''worker'' on pgmate-worker';

COMMENT ON FUNCTION evaluate(board[], bigint, board[][], int[]) IS
  'network evaluation on pgmate-worker: win/draw/loss for the side to move and priors over the legal moves, by the network row''s current weights (network_id, weights_sha256 say which); history is a 2-D array, one row of earlier positions (newest first) per board; repetitions how often each board occurred before in its game';

COMMENT ON FUNCTION worker_pid() IS 'pid of the supervised pgmate-worker, NULL when none runs';

COMMENT ON FUNCTION status(checkers_board) IS 'ongoing, black_wins or white_wins (the side to move loses when it cannot move)';

COMMENT ON FUNCTION play(checkers_board, text, text) IS 'plays a move in numeric notation (11-15, 15x24x31; a jump may give only its start and end when that names one sequence)';

COMMENT ON FUNCTION move(checkers_board, text, text) IS 'numeric notation, validated against the board';

COMMENT ON FUNCTION board_svg(checkers_board, checkers_move) IS 'a self-contained SVG picture of the board (PDN numbers on the dark squares), the last move highlighted';

COMMENT ON FUNCTION game_positions(board, move[]) IS
  'one row per position of a game: ply 0 is the start; move and san are the move played from it';

COMMENT ON FUNCTION game_keys(board, move[]) IS
  'Polyglot keys of every position of a game; index it with GIN to find games by position';

COMMENT ON FUNCTION game_hash(board, move[]) IS
  'a game''s identity for finding copies of it: a 64-bit hash of its start position and moves (not its tags)';

COMMENT ON FUNCTION material_signature(board, move[]) IS
  'a game''s final material and whether a pawn promoted, packed (what material search prunes by); NULL for an illegal game';

COMMENT ON FUNCTION square_signature(board, move[]) IS
  'the squares each side''s king, pawns and other pieces stood on during a game, 48 bytes (what pattern search prunes by); NULL for an illegal game';

COMMENT ON FUNCTION pgmate.game_speed(text) IS
  'lichess''s speed of a PGN TimeControl ("300+3": base + 40 x increment seconds): ultraBullet < 30, bullet < 180, blitz < 480, rapid < 1500, classical < 21600, else correspondence, as "-" is; NULL for no tag or another form';

COMMENT ON FUNCTION pgn_games(text, text) IS
  'games of a PGN text (mainline moves validated), with the movetext''s result where the Result tag (result) says another, [%clk] clocks and [%eval] evaluations (as pgmate.save_position_evals takes them); on_error => ''skip'' leaves bad games out with a NOTICE';

COMMENT ON FUNCTION pgmate.pgn_tags(pgmate.games) IS 'the PGN tags of a game as to_pgn writes them: names and values';

COMMENT ON FUNCTION to_pgn(pgmate.games) IS 'the game in PGN export format';

COMMENT ON FUNCTION pgmate.import_openings(text) IS 'replaces pgmate.openings with the ECO lines of a PGN text (e.g. pgn-extract''s eco.pgn)';

COMMENT ON FUNCTION pgmate.import_duplicates_lock() IS
  'takes, until the end of the transaction, the lock that imports skipping copies of stored games serialize on';

COMMENT ON FUNCTION pgmate.position_index_merge(boolean) IS
  'all_runs: merges every run of the position index into one (fastest searches); false: only the levels that are full, as inserts do (after a bulk import with pgmate.position_index_deferred_merges); returns the entries of the index';

COMMENT ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) IS
  'merges the keys of share `part` of `parts` of the runs into a part not yet searched; its run id (NULL when empty)';

COMMENT ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) IS
  'in one step, the runs give way to the parts merged from them (at `level`), retired; 40001 when the index changed meanwhile; 22023 unless the parts are every non-empty share of one merge of exactly these runs';

COMMENT ON FUNCTION pgmate.position_index_clean(int, int) IS
  'removes share `part` of `parts` of the runs a publication retired, with their blocks (the next change to the index removes them otherwise); the runs removed';

COMMENT ON FUNCTION pgmate.position_index_rebuild() IS
  'builds the position index again from pgmate.games; returns its entries';

COMMENT ON FUNCTION pgmate.position_games(board, bigint) IS
  'ids of the games that reached the position, ascending (at most max_games of them)';

COMMENT ON FUNCTION pgmate.position_count(board) IS 'how many games reached the position';

COMMENT ON FUNCTION pgmate.explorer(board) IS
  'the moves played from the position, most played first: games, results, White''s score';

COMMENT ON FUNCTION pgmate.position_moves(board) IS
  'every game that reached the position, by id: the move played from it there (NULL where the game ended) and the result';

COMMENT ON FUNCTION pgmate.explorer(board, jsonb) IS
  'the moves played from the position in the games that pass the filters (min_rating, max_rating: the players'' average; since, until: PGN dates like 2019 or 2019.06; player, white, black, source; speed: lichess''s speed of the TimeControl, one or an array): games, results, White''s score, average rating, last date played';

COMMENT ON FUNCTION material(board) IS
  'the men on the board, White''s then Black''s: K, then Q R B N P letters, e.g. KRPvKR';

COMMENT ON FUNCTION matches_pattern(board, text) IS
  'sub-FEN pattern: 8 ranks from the 8th; a piece letter must stand there, ''.'' must be empty, ''?'' or a digit n (n squares) is anything';

COMMENT ON FUNCTION reaches_material(board, move[], text) IS
  'whether some position of the game has exactly this material (e.g. KRPvKR)';

COMMENT ON FUNCTION reaches_pattern(board, move[], text) IS
  'whether some position of the game matches the sub-FEN pattern (see matches_pattern)';

COMMENT ON FUNCTION may_reach_material(bigint, text) IS
  'false when a game''s material_signature rules the material out (captures never give men back)';

COMMENT ON FUNCTION pgmate.game_reaches_material(pgmate.games, text) IS
  'whether some position of the stored game has exactly this material (e.g. KRPvKR), ruling most games out by their signature';

COMMENT ON FUNCTION may_match_pattern(bytea, text) IS
  'false when a game''s square_signature rules the pattern out (its men never stood where the pattern needs them)';

COMMENT ON FUNCTION pgmate.game_reaches_pattern(pgmate.games, text) IS
  'whether some position of the stored game matches the sub-FEN pattern, ruling most games out by their square_signature';

COMMENT ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) IS
  'plays games of MCTS self-play (network NULL: pure MCTS) into pgmate.games and pgmate.selfplay_positions; commits after each game unless called inside a transaction block';

COMMENT ON FUNCTION pgmate.visit_policy(int[]) IS
  'visit counts normalised to sum to 1: the policy target of a searched position';

COMMENT ON FUNCTION pgmate.policy_disagreement(int[], real[]) IS
  'total variation distance between the visit distribution and the priors (0 = agree, 1 = disjoint); NULL without visits or for arrays of different lengths';

COMMENT ON FUNCTION pgmate.selfplay_lengths(int) IS
  'histogram of self-play game lengths per network: buckets of `bucket` plies with a text bar';

COMMENT ON FUNCTION pgmate.search_wdl(real, real) IS
  'a search''s value q (W - L) and draw probability d as {win, draw, loss}: ((1 - d + q) / 2, d, (1 - d - q) / 2); without d, q = 0 is a certain draw (core/mcts/search.h)';

COMMENT ON FUNCTION without_clocks(board) IS
  'the position with its clocks cleared (halfmove 0, fullmove 1): what evaluations are keyed by';

COMMENT ON FUNCTION pgmate.eval_row_problem(board, int, int, move, move[], jsonb) IS
  'why an evaluation cannot be stored for its position (an illegal best move, a pv or MultiPV line that is not legal in turn, a score out of range, lines not as pgmate writes them); NULL when it can';

COMMENT ON FUNCTION pgmate.eval_row_believable(board, int, int, move, move[], jsonb) IS
  'true when an evaluation can be stored for its position, else 22023 with pgmate.eval_row_problem''s reason: pgmate.position_evals'' check';

COMMENT ON FUNCTION pgmate.eval_writer_rank(regrole) IS
  'whether this session reads the evaluations a role stored, by preference: 0 its own, then the roles of pgmate.eval_writers in order (* for every role), then the extension owner''s (1000); NULL for a role it does not read';

COMMENT ON FUNCTION pgmate.position_evals_writer() IS
  'pgmate.position_evals'' trigger: the writer is the storing role (the table owner may name another)';

COMMENT ON FUNCTION pgmate.eval_cp(int, int) IS
  'a score as centipawns clamped to +-1000, a mate as +-1000 (lichess''s ceiling)';

COMMENT ON FUNCTION pgmate.win_percent(int) IS
  'lichess''s winning chances in percent: 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), cp clamped to +-1000';

COMMENT ON FUNCTION pgmate.move_accuracy(float8, float8) IS
  'lichess''s move accuracy in percent from the mover''s win% before and after: 103.1668 * exp(-0.04354 * drop) - 3.1669 + 1, in [0, 100]';

COMMENT ON FUNCTION pgmate.move_class(float8) IS
  'lichess''s judgement of a move by the winning chances it lost (win% / 50): blunder >= 0.3, mistake >= 0.2, inaccuracy >= 0.1, else NULL';

COMMENT ON FUNCTION pgmate.move_judgement(int, int, int, int) IS
  'lichess''s judgement of a move from its scores before and after (mover''s view, mate > 0: the mover mates; 0 after: it mated): move_class by chances lost, and lichess''s rules for a mate walked into or let slip; NULL for none';

COMMENT ON FUNCTION pgmate.accuracy_of_game(int[], bool) IS
  'lichess''s game accuracy (volatility-weighted and harmonic means of move accuracies) and ACPL per side, from the clamped evaluations (White''s view) of every position, the start first';

COMMENT ON FUNCTION pgmate.player_accuracy(bigint[]) IS
  'per player and engine over fully analysed games (all, or those given): games, moves, mean game accuracy, ACPL and the moves of each class';

COMMENT ON FUNCTION pgmate.analysis_positions(bigint[], text, text) IS
  'the positions of these games not yet evaluated by this engine at these limits, each once';

COMMENT ON FUNCTION pgmate.save_position_evals(text, text, jsonb) IS
  'stores evaluations (a JSON array of {board, cp, mate, win, draw, loss, wdl_source, best, pv, depth, nodes, lines}); returns how many were new';

COMMENT ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) IS
  'evaluates every position of the games a query returns (their ids, first column) with a UCI engine run on the server or a network on the worker (net:ID:S); options: nodes, depth, movetime, multipv, jobs, hash, chunk, move_timeout, max_failures, warm (no fresh engine state per position: limits ,warm), parallel';

COMMENT ON FUNCTION pgmate.pgn_eval_text(int, int, text) IS
  'a score from the side to move''s view as PGN''s [%eval] writes it: White''s view, pawns ("0.17") or moves to mate ("#-3"); NULL for a checkmate';

COMMENT ON FUNCTION pgmate.to_pgn_with_evals(pgmate.games, text, text) IS
  'the game in PGN with [%eval] and [%clk] comments and ?!, ?, ?? marks from one engine''s evaluations (the given one, else the one that evaluated most of its positions)';

COMMENT ON FUNCTION pgmate.import_pgn(text, text) IS 'inserts the games of a PGN text into pgmate.games (their [%eval] comments into pgmate.position_evals); returns how many';

COMMENT ON FUNCTION pgmate.load_network(bigint) IS 'hands pgmate-worker this network now (it holds several, least recently used out first)';

COMMENT ON FUNCTION pgmate.kill_worker() IS 'kills the supervised worker (the supervisor starts a new one)';

COMMENT ON FUNCTION pgmate.weights_config(bytea) IS
  'the network configuration stored in safetensors weights (their pgmate_config metadata); NULL for other bytes';

COMMENT ON FUNCTION pgmate.shipped_network(text) IS
  'the weights of a network pgmate ships (its file pgmate_NAME.safetensors in the extension''s share folder)';

COMMENT ON FUNCTION pgmate.install_network(text) IS
  'installs a network pgmate ships (''default'') into pgmate.networks and returns its id; the same id on a second call';

COMMENT ON FUNCTION pgmate.acting_role() IS 'the current role (current_user) as a regrole: the owner of the rows it makes';

COMMENT ON FUNCTION pgmate.login_role() IS
  'the role this session logged in as (what SET ROLE and SET SESSION AUTHORIZATION leave unchanged), as a regrole';

COMMENT ON FUNCTION pgmate.session_is_working(int, timestamptz, timestamptz) IS
  'whether a session still runs the statement that took a lease at a time (a dead, idle or moved-on session holds nothing)';

COMMENT ON FUNCTION pgmate.client_claim(text) IS
  'claims a name for this session (a client''s run or match); false while another session of the same login role holds it';

COMMENT ON FUNCTION pgmate.player_spec(text) IS
  'a player spec (random, mcts:S, net:ID:S, uci:COMMAND[:KEY=VALUE,...] or a JSON object) with every setting resolved, as matches store it';

COMMENT ON FUNCTION pgmate.elo(bigint, bigint, bigint) IS
  'score, draw ratio, Elo with its 95% interval and likelihood of superiority from wins, draws and losses';

COMMENT ON FUNCTION pgmate.pentanomial_elo(bigint, bigint, bigint, bigint, bigint) IS
  'score, DD/WL pair ratio, Elo with its 95% interval and LOS from game pairs (fishtest''s pentanomial statistics)';

COMMENT ON FUNCTION pgmate.sprt(bigint, bigint, bigint, bigint, bigint, float8, float8, float8, float8) IS
  'log-likelihood ratio of H1 (elo1) over H0 (elo0), its bounds and the verdict (H0, H1 or continue)';

COMMENT ON FUNCTION pgmate.ratings(jsonb, float8) IS
  'Elo ratings (Bradley-Terry) of every player over all arena games, anchored to a player spec at anchor_elo';

COMMENT ON PROCEDURE pgmate.arena(jsonb, jsonb, int, jsonb) IS
  'plays a match between two players into pgmate.games and pgmate.matches; commits after each game unless called inside a transaction block';

COMMENT ON FUNCTION pgmate.network_accuracy(bigint, text) IS
  'top-1 move accuracy and policy and WDL cross-entropies of a network on the rows of a training query';

COMMENT ON FUNCTION pgmate.is_own_training_run(bigint) IS 'whether a training run belongs to the current role';

COMMENT ON FUNCTION pgmate.training_samples(text) IS
  'the rows of a training query encoded as pgmate-worker training samples';

COMMENT ON PROCEDURE pgmate.train(bigint, text, bigint, jsonb, bigint) IS
  'trains a copy of a network on pgmate-worker from the rows of a training query; the new network''s id comes back';

COMMENT ON FUNCTION pgmate.training_chart(bigint, int, int) IS
  'SVG chart of the training log of the run that made a network (or of the newest run training it)';

COMMENT ON FUNCTION pgmate.is_own_learning_run(bigint) IS 'whether a learning run belongs to the current role';

COMMENT ON FUNCTION pgmate.learning_game(text, bigint) IS
  'records a self-play game stored under a learning loop label (learn:RUN:ITERATION) as that iteration''s; only the run''s owner may';

COMMENT ON FUNCTION pgmate.learning_settings(jsonb, jsonb) IS
  'a learning run''s settings: the options checked and completed with their defaults, or an existing run''s stored settings checked against the options of a call';

COMMENT ON FUNCTION pgmate.learning_device_defaults(jsonb, jsonb, text) IS
  'a new learning run''s batch and learning rate on a CUDA worker where not given: 1024 and the default rate times sqrt(8)';

COMMENT ON FUNCTION pgmate.learning_option_list() IS
  'the rows of pgmate.learning_options, from the table of options in core/learning/settings.cpp';

COMMENT ON FUNCTION pgmate.learning_gate(jsonb, jsonb[], jsonb) IS
  'promoted, kept or vetoed from the match against the best network, the veto matches and the run''s settings';

COMMENT ON FUNCTION pgmate.learning_reason(jsonb, jsonb, bigint, jsonb, jsonb) IS
  'the reason of a learning run''s decision after an arena round: the match against the best network, the rule, the veto matches';

COMMENT ON FUNCTION pgmate.learning_escalation(int, float8, float8, float8) IS
  'a veto''s escalation at a level (1..4): share of the window''s newest games to exclude, new pretraining share, learning rate and share of self-play games played by the current network';

COMMENT ON FUNCTION pgmate.own_learning_run(bigint) IS
  'a learning run''s row, for its owner only (42501 for another role)';

COMMENT ON FUNCTION pgmate.learning_window(bigint, int) IS
  'the window of an iteration of a learning run: its newest self-play positions, with their games'' ids';

COMMENT ON FUNCTION pgmate.learning_data(bigint, int) IS
  'the training rows of an iteration of a learning run: the window of self-play positions and the pretraining mix';

COMMENT ON PROCEDURE pgmate.learn(text, int, jsonb) IS
  'runs iterations of a learning run (self-play, training, arena, promote or veto); a new run with the options, or an existing one where it stopped';

COMMENT ON FUNCTION pgmate.learning_run_id(text) IS
  'the learning run a name means: the caller''s own run of that name, else the only run of that name (NULL: none)';

COMMENT ON FUNCTION pgmate.learning_chart(text, int, int) IS
  'SVG charts of a learning run per iteration: training losses and held-out top-1; arena Elo against the best network with its 95% interval';
