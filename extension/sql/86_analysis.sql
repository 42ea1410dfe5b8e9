
-- ===================================================================== engine analysis
-- An engine's evaluation of every position of a set of games, stored once per position
-- (transpositions across games share it) and engine identity; move classes and accuracy by
-- lichess's formulas over them; the same rows serve as training targets (pgmate.eval_targets).

CREATE FUNCTION without_clocks(board) RETURNS board
  AS 'MODULE_PATHNAME', 'board_without_clocks' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION without_clocks(board) IS
  'the position with its clocks cleared (halfmove 0, fullmove 1): what evaluations are keyed by';

-- What a row of pgmate.position_evals must hold true of its position, whoever writes it
-- (core/analysis/evaluation.h, stored_eval_problem), and whose rows a session reads.
CREATE FUNCTION pgmate.eval_row_problem(pos board, score_cp int, mate int, best_move move, pv move[], lines jsonb)
  RETURNS text
  AS 'MODULE_PATHNAME', 'eval_row_problem' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.eval_row_problem(board, int, int, move, move[], jsonb) IS
  'why an evaluation cannot be stored for its position (an illegal best move, a pv or MultiPV line that is not legal in turn, a score out of range, lines not as pgmate writes them); NULL when it can';
CREATE FUNCTION pgmate.eval_row_believable(pos board, score_cp int, mate int, best_move move, pv move[], lines jsonb)
  RETURNS bool
  AS 'MODULE_PATHNAME', 'eval_row_believable' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.eval_row_believable(board, int, int, move, move[], jsonb) IS
  'true when an evaluation can be stored for its position, else 22023 with pgmate.eval_row_problem''s reason: pgmate.position_evals'' check';
CREATE FUNCTION pgmate.eval_writer_rank(writer regrole) RETURNS int
  AS 'MODULE_PATHNAME', 'eval_writer_rank' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.eval_writer_rank(regrole) IS
  'whether this session reads the evaluations a role stored, by preference: 0 its own, then the roles of pgmate.eval_writers in order (* for every role), then the extension owner''s (1000); NULL for a role it does not read';

CREATE TABLE pgmate.position_evals (
  key         bigint NOT NULL,                 -- board_key(position)
  position    board NOT NULL,                  -- clocks cleared (without_clocks)
  engine      text NOT NULL,                   -- the engine's "id name" ('Stockfish 15.1'), or 'pgn'
  limits      text NOT NULL,                   -- 'nodes=100000', 'depth=20,multipv=3'; '' for 'pgn'
  score_cp    int,                             -- the side to move's view; one of score_cp and mate
  mate        int,                             -- moves to mate: > 0 the side to move mates, <= 0 it is mated
  win         smallint NOT NULL,               -- chances per mille, side to move
  draw        smallint NOT NULL,
  loss        smallint NOT NULL,
  wdl_source  text NOT NULL CHECK (wdl_source IN ('engine', 'model')),
  best_move   move,                            -- NULL where there is no legal move, or not known ('pgn')
  pv          move[],
  depth       int,
  nodes       bigint,
  lines       jsonb,                           -- MultiPV: [{"move", "cp", "mate", "pv"}, ...], best first
  analysed_at timestamptz NOT NULL DEFAULT now(),
  writer      regrole NOT NULL,                -- the role that stored it (the trigger below); 0: not believed
  PRIMARY KEY (key, position, engine, limits, writer),
  CONSTRAINT position_evals_one_score CHECK ((score_cp IS NULL) <> (mate IS NULL)),
  CONSTRAINT position_evals_wdl CHECK (win >= 0 AND draw >= 0 AND loss >= 0 AND win + draw + loss = 1000),
  CONSTRAINT position_evals_keyed CHECK (key = board_key(position) AND position = without_clocks(position)),
  CONSTRAINT position_evals_believable
    CHECK (writer::oid = 0 OR pgmate.eval_row_believable(position, score_cp, mate, best_move, pv, lines))
);
COMMENT ON TABLE pgmate.position_evals IS
  'engine evaluations of positions (clocks cleared), one per position, engine, limits and writer: pgmate analyse, CALL pgmate.analyse, PGN [%eval] comments; read through pgmate.visible_evals';
SELECT pg_catalog.pg_extension_config_dump('pgmate.position_evals', '');

-- A row's writer is the role that stores it, whatever the INSERT says: only a role with the
-- table owner's rights (a restore) names another. So a role that may insert evaluations
-- (an importer of PGN with [%eval], a player analysing with a network) writes only its own.
-- (The check constraint above then refuses a row that cannot be believed of its position,
-- with the reason.)
CREATE FUNCTION pgmate.position_evals_writer() RETURNS trigger
  AS 'MODULE_PATHNAME', 'position_evals_writer' LANGUAGE C;
COMMENT ON FUNCTION pgmate.position_evals_writer() IS
  'pgmate.position_evals'' trigger: the writer is the storing role (the table owner may name another)';
CREATE TRIGGER position_evals_writer BEFORE INSERT OR UPDATE ON pgmate.position_evals
  FOR EACH ROW EXECUTE FUNCTION pgmate.position_evals_writer();

-- The evaluations a session reads: of each position, engine and limits, the row of the most
-- preferred writer it reads (pgmate.eval_writer_rank: its own, pgmate.eval_writers', the
-- extension owner's). Another role's rows are not read unless that role is named, so no
-- role decides an evaluation for another. The views, analyses and exports read this.
CREATE VIEW pgmate.visible_evals AS
  SELECT e.*
  FROM pgmate.position_evals e
  WHERE pgmate.eval_writer_rank(e.writer) IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM pgmate.position_evals o
                    WHERE o.key = e.key AND o.position = e.position AND o.engine = e.engine AND o.limits = e.limits
                      AND o.writer <> e.writer
                      AND pgmate.eval_writer_rank(o.writer) < pgmate.eval_writer_rank(e.writer));
COMMENT ON VIEW pgmate.visible_evals IS
  'the rows of pgmate.position_evals this session reads: one per position, engine and limits, its own first, then pgmate.eval_writers'' in order, then the extension owner''s';

-- lichess's formulas (core/analysis/accuracy.h gives them and their source).
-- (Names qualified, no SET clause: the views inline it.)
CREATE FUNCTION pgmate.eval_cp(score_cp int, mate int) RETURNS int
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN mate IS NOT NULL THEN CASE WHEN mate OPERATOR(pg_catalog.>) 0 THEN 1000 ELSE -1000 END
                    ELSE greatest(-1000, least(1000, score_cp)) END $$;
COMMENT ON FUNCTION pgmate.eval_cp(int, int) IS
  'a score as centipawns clamped to +-1000, a mate as +-1000 (lichess''s ceiling)';
CREATE FUNCTION pgmate.win_percent(cp int) RETURNS float8
  AS 'MODULE_PATHNAME', 'analysis_win_percent' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.win_percent(int) IS
  'lichess''s winning chances in percent: 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), cp clamped to +-1000';
CREATE FUNCTION pgmate.move_accuracy(win_before float8, win_after float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'analysis_move_accuracy' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.move_accuracy(float8, float8) IS
  'lichess''s move accuracy in percent from the mover''s win% before and after: 103.1668 * exp(-0.04354 * drop) - 3.1669 + 1, in [0, 100]';
CREATE FUNCTION pgmate.move_class(chances_lost float8) RETURNS text
  AS 'MODULE_PATHNAME', 'analysis_move_class' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.move_class(float8) IS
  'lichess''s judgement of a move by the winning chances it lost (win% / 50): blunder >= 0.3, mistake >= 0.2, inaccuracy >= 0.1, else NULL';
CREATE FUNCTION pgmate.move_judgement(cp_before int, mate_before int, cp_after int, mate_after int) RETURNS text
  AS 'MODULE_PATHNAME', 'analysis_move_judgement' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.move_judgement(int, int, int, int) IS
  'lichess''s judgement of a move from its scores before and after (mover''s view, mate > 0: the mover mates; 0 after: it mated): move_class by chances lost, and lichess''s rules for a mate walked into or let slip; NULL for none';
CREATE FUNCTION pgmate.accuracy_of_game(cps int[], white_first bool,
    OUT side text, OUT accuracy float8, OUT acpl float8, OUT moves int) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'analysis_accuracy_of_game' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 2;
COMMENT ON FUNCTION pgmate.accuracy_of_game(int[], bool) IS
  'lichess''s game accuracy (volatility-weighted and harmonic means of move accuracies) and ACPL per side, from the clamped evaluations (White''s view) of every position, the start first';

-- Every move of every game whose positions before and after it were evaluated by one engine
-- at one set of limits (a game analysed by several engines has a row per engine).
CREATE VIEW pgmate.move_evals AS
  SELECT g.id AS game, p.ply + 1 AS ply, @extschema@.side_to_move(p.board) AS side, p.move, p.san,
         b.engine, b.limits,
         c.cp_before, c.cp_after,
         b.mate AS mate_before,
         CASE WHEN a.mate IS NOT NULL THEN -a.mate END AS mate_after,  -- the mover's view; 0: the move mated
         w.win_before, w.win_after,
         (w.win_before - w.win_after) / 50 AS chances_lost,
         pgmate.move_accuracy(w.win_before, w.win_after) AS accuracy,
         pgmate.move_judgement(b.score_cp, b.mate, -a.score_cp, CASE WHEN a.mate IS NOT NULL THEN -a.mate END) AS class,
         CASE WHEN b.best_move <> p.move THEN b.best_move END AS best_move,
         CASE WHEN b.best_move <> p.move THEN @extschema@.san(p.board, b.best_move) END AS best_san
  FROM pgmate.games g
  CROSS JOIN LATERAL @extschema@.game_positions(g.start, g.moves) p
  CROSS JOIN LATERAL (SELECT @extschema@.play(p.board, p.move) AS board) n
  JOIN pgmate.visible_evals b
    ON b.key = @extschema@.board_key(p.board) AND b.position = @extschema@.without_clocks(p.board)
  JOIN pgmate.visible_evals a
    ON a.key = @extschema@.board_key(n.board) AND a.position = @extschema@.without_clocks(n.board)
       AND a.engine = b.engine AND a.limits = b.limits
  CROSS JOIN LATERAL (SELECT pgmate.eval_cp(b.score_cp, b.mate) AS cp_before,
                             -pgmate.eval_cp(a.score_cp, a.mate) AS cp_after) c
  CROSS JOIN LATERAL (SELECT pgmate.win_percent(c.cp_before) AS win_before,
                             pgmate.win_percent(c.cp_after) AS win_after) w
  WHERE p.move IS NOT NULL;
COMMENT ON VIEW pgmate.move_evals IS
  'each analysed move: evaluations before and after (mover''s view, clamped centipawns and lichess win%), accuracy, class (inaccuracy, mistake, blunder) and the engine''s move when it differs';

-- Per game, side and engine: lichess's accuracy and ACPL (only when every move of the game
-- was analysed: complete), and the moves of each class.
CREATE VIEW pgmate.game_accuracy AS
  WITH per_game AS (
    SELECT m.game, m.engine, m.limits, count(*) AS analysed,
           array_agg(CASE m.side WHEN 'white' THEN m.cp_before ELSE -m.cp_before END ORDER BY m.ply)
             || (array_agg(CASE m.side WHEN 'white' THEN m.cp_after ELSE -m.cp_after END ORDER BY m.ply DESC))[1]
             AS cps,
           count(*) FILTER (WHERE m.side = 'white') AS white_moves,
           count(*) FILTER (WHERE m.side = 'white' AND m.class = 'inaccuracy') AS white_inaccuracies,
           count(*) FILTER (WHERE m.side = 'white' AND m.class = 'mistake') AS white_mistakes,
           count(*) FILTER (WHERE m.side = 'white' AND m.class = 'blunder') AS white_blunders,
           count(*) FILTER (WHERE m.side = 'black') AS black_moves,
           count(*) FILTER (WHERE m.side = 'black' AND m.class = 'inaccuracy') AS black_inaccuracies,
           count(*) FILTER (WHERE m.side = 'black' AND m.class = 'mistake') AS black_mistakes,
           count(*) FILTER (WHERE m.side = 'black' AND m.class = 'blunder') AS black_blunders
    FROM pgmate.move_evals m
    GROUP BY m.game, m.engine, m.limits)
  SELECT pg.game, s.side, pg.engine, pg.limits, a.accuracy, a.acpl, s.moves, s.inaccuracies, s.mistakes,
         s.blunders, pg.analysed = g.ply_count AS complete
  FROM per_game pg
  JOIN pgmate.games g ON g.id = pg.game
  CROSS JOIN LATERAL (VALUES
      ('white', pg.white_moves, pg.white_inaccuracies, pg.white_mistakes, pg.white_blunders),
      ('black', pg.black_moves, pg.black_inaccuracies, pg.black_mistakes, pg.black_blunders))
    AS s(side, moves, inaccuracies, mistakes, blunders)
  LEFT JOIN LATERAL pgmate.accuracy_of_game(CASE WHEN pg.analysed = g.ply_count THEN pg.cps END,
                                            @extschema@.side_to_move(g.start) = 'white') a
    ON a.side = s.side
  WHERE s.moves > 0;
COMMENT ON VIEW pgmate.game_accuracy IS
  'per game, side and engine: lichess''s accuracy % and ACPL (NULL until every move is analysed: complete) and the inaccuracies, mistakes and blunders';

-- Per player (the games' White and Black names) and engine, over the given games (NULL: all).
CREATE FUNCTION pgmate.player_accuracy(games bigint[] DEFAULT NULL,
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
COMMENT ON FUNCTION pgmate.player_accuracy(bigint[]) IS
  'per player and engine over fully analysed games (all, or those given): games, moves, mean game accuracy, ACPL and the moves of each class';

-- What an analysis of these games still has to evaluate: every position not yet in
-- pgmate.visible_evals for this engine and limits, once (with the clocks of its first game),
-- in the order the games reach them.
CREATE FUNCTION pgmate.analysis_positions(game_ids bigint[], engine text, limits text) RETURNS SETOF board
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
COMMENT ON FUNCTION pgmate.analysis_positions(bigint[], text, text) IS
  'the positions of these games not yet evaluated by this engine at these limits, each once';

-- Stores evaluations given as a JSON array (core/analysis/evaluation.h, eval_json, gives its
-- format) as the calling role's; a position it already stored for this engine and limits
-- keeps its row. Returns how many were new.
CREATE FUNCTION pgmate.save_position_evals(engine text, limits text, evals jsonb) RETURNS bigint
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
COMMENT ON FUNCTION pgmate.save_position_evals(text, text, jsonb) IS
  'stores evaluations (a JSON array of {board, cp, mate, win, draw, loss, wdl_source, best, pv, depth, nodes, lines}); returns how many were new';

-- Scores alone (a PGN's [%eval] comments: no move, line, depth or nodes; the model's WDL), a
-- column an array: pgmate import sends them in binary, so nothing is parsed here but the
-- boards.
CREATE FUNCTION pgmate.save_position_scores(engine text, limits text, positions board[], score_cp int[], mate int[],
                                            win smallint[], draw smallint[], loss smallint[]) RETURNS bigint
  LANGUAGE plpgsql VOLATILE STRICT SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE saved bigint;
  BEGIN
    IF cardinality(positions) <> ANY (ARRAY[cardinality(score_cp), cardinality(mate), cardinality(win),
                                            cardinality(draw), cardinality(loss)]) THEN
      RAISE EXCEPTION 'pgmate.save_position_scores: arrays of % positions, % score_cp, % mate, % win, % draw and % loss',
        cardinality(positions), cardinality(score_cp), cardinality(mate), cardinality(win), cardinality(draw),
        cardinality(loss)
        USING ERRCODE = 'invalid_parameter_value', HINT = 'Every array holds one element per position.';
    END IF;
    INSERT INTO pgmate.position_evals AS e (key, position, engine, limits, score_cp, mate, win, draw, loss, wdl_source)
    SELECT @extschema@.board_key(r.board), @extschema@.without_clocks(r.board), $1, $2, r.cp, r.mate, r.win, r.draw,
           r.loss, 'model'
    FROM unnest($3, $4, $5, $6, $7, $8) AS r(board, cp, mate, win, draw, loss)
    ORDER BY 1  -- in key order, as save_position_evals
    ON CONFLICT (key, position, engine, limits, writer) DO NOTHING;
    GET DIAGNOSTICS saved = ROW_COUNT;
    RETURN saved;
  END
  $$;
COMMENT ON FUNCTION pgmate.save_position_scores(text, text, board[], int[], int[], smallint[], smallint[], smallint[]) IS
  'stores scores without moves (positions, score_cp or mate, win, draw, loss: arrays of one length; WDL from the model); returns how many were new';

CREATE PROCEDURE pgmate.analyse(games text, engine jsonb, options jsonb DEFAULT '{}')
  AS 'MODULE_PATHNAME', 'analyse_procedure' LANGUAGE C;
-- A network analysis loads the shared worker: granted, like self-play (docs/security.md).
REVOKE ALL ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) FROM PUBLIC;
COMMENT ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) IS
  'evaluates every position of the games a query returns (their ids, first column) with a UCI engine run on the server or a network on the worker (net:ID:S); options: nodes, depth, movetime, multipv, jobs, hash, chunk, move_timeout, max_failures, warm (no fresh engine state per position: limits ,warm), parallel';

-- PGN with the evaluations, as lichess exports an analysed game: after each move a comment
-- with its [%eval] (White's view, pawns or #moves to mate), the clock ([%clk]) when the game
-- has one, and for an inaccuracy, mistake or blunder its name and the engine's move; the
-- move itself marked ?!, ? or ??. The evaluations are one engine's at one set of limits:
-- the given one, else the one that evaluated most of the game's positions.
CREATE FUNCTION pgn_text(tag_names text[], tag_values text[], start board, moves move[], result text,
                         suffixes text[], comments text[]) RETURNS text
  AS 'MODULE_PATHNAME', 'pgn_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION pgmate.pgn_eval_text(score_cp int, mate int, side text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT CASE WHEN mate IS NOT NULL THEN
                  CASE WHEN mate <> 0 THEN '#' || (CASE side WHEN 'white' THEN mate ELSE -mate END) END
                ELSE to_char((CASE side WHEN 'white' THEN score_cp ELSE -score_cp END) / 100.0, 'FM9999990.00') END
  $$;
COMMENT ON FUNCTION pgmate.pgn_eval_text(int, int, text) IS
  'a score from the side to move''s view as PGN''s [%eval] writes it: White''s view, pawns ("0.17") or moves to mate ("#-3"); NULL for a checkmate';
CREATE FUNCTION pgmate.to_pgn_with_evals(game pgmate.games, engine text DEFAULT NULL, limits text DEFAULT NULL)
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
COMMENT ON FUNCTION pgmate.to_pgn_with_evals(pgmate.games, text, text) IS
  'the game in PGN with [%eval] and [%clk] comments and ?!, ?, ?? marks from one engine''s evaluations (the given one, else the one that evaluated most of its positions)';

-- PGN text into pgmate.games, here beside the evaluations its [%eval] comments fill.
CREATE FUNCTION pgmate.import_pgn(pgn text, on_error text DEFAULT 'fail') RETURNS bigint
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
COMMENT ON FUNCTION pgmate.import_pgn(text, text) IS 'inserts the games of a PGN text into pgmate.games (their [%eval] comments into pgmate.position_evals); returns how many';
