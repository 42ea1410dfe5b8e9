
-- ===================================================================== self-play
-- Games played by pgmate selfplay or CALL pgmate.selfplay are rows of pgmate.games
-- (source 'selfplay', network_id, search parameters in selfplay jsonb); each searched
-- position is a row here, the training target of the next network.
CREATE TABLE pgmate.selfplay_positions (
  game_id bigint NOT NULL REFERENCES pgmate.games (id) ON DELETE CASCADE,
  ply     int NOT NULL,                 -- 0 = the game's start position
  board   board NOT NULL,               -- the position searched
  moves   move[] NOT NULL,              -- its legal moves, generation order
  visits  int[] NOT NULL,               -- search visits per move: the policy target
  priors  real[] NOT NULL,              -- the evaluator's priors per move (before noise)
  value   real NOT NULL,                -- root value W - L from the side to move
  played  move NOT NULL,                -- the move chosen
  policy  real[],                       -- the search's policy target per move (NULL: visit shares)
  repetitions int NOT NULL DEFAULT 0,   -- earlier occurrences of board in its game (a network input)
  -- false: a cheap search (playout cap randomization): the position's policy is no target
  full_search bool NOT NULL DEFAULT true,
  -- the search's draw probability at the root: with value, its win/draw/loss estimate
  -- (NULL for positions stored before pgmate 0.9.0)
  draw    real,
  PRIMARY KEY (game_id, ply),
  CONSTRAINT selfplay_positions_lengths
    CHECK (cardinality(visits) = cardinality(moves) AND cardinality(priors) = cardinality(moves)
           AND (policy IS NULL OR cardinality(policy) = cardinality(moves)))
);
COMMENT ON TABLE pgmate.selfplay_positions IS
  'one row per searched position of a self-play game: visit counts, priors, policy target, root value and draw probability, repetitions, move played, full or cheap search';
SELECT pg_catalog.pg_extension_config_dump('pgmate.selfplay_positions', '');

-- Self-play inside the server. network NULL: pure MCTS (uniform priors, random playouts),
-- played in this backend; otherwise the network with that id in pgmate.networks, served
-- by pgmate-worker (a worker that is down or dies fails the call with SQLSTATE 08006).
-- options: seed (default: a fresh one, stored with every game), max_plies, c_puct,
-- fpu_reduction, fpu_reduction_root, noise, dirichlet_alpha, dirichlet_weight,
-- leaves_per_game, temperature, temperature_plies, final_temperature, cache_entries, and
-- run (a label stored in games.selfplay, default 'sql'). Bad arguments, bad options and an
-- unknown network: SQLSTATE 22023; a NULL games, simulations or parallel: 22004; a run
-- whose trees and cache would not fit pgmate.selfplay_tree_memory: 54000.
-- CALLed on its own, it commits after every game: query cancel or statement_timeout
-- stops it between moves and keeps the games already finished. Inside a transaction
-- block (or a PL/pgSQL block with an exception handler) the games commit or roll back
-- with the caller's transaction.
-- A NOTICE follows each game; its DETAIL carries the rates (positions/s, mean batch).
CREATE PROCEDURE pgmate.selfplay(games int, simulations int, network bigint DEFAULT NULL,
                                 parallel int DEFAULT 8, options jsonb DEFAULT '{}')
  LANGUAGE C AS 'MODULE_PATHNAME', 'selfplay_procedure';
REVOKE ALL ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) FROM PUBLIC;
COMMENT ON PROCEDURE pgmate.selfplay(int, int, bigint, int, jsonb) IS
  'plays games of MCTS self-play (network NULL: pure MCTS) into pgmate.games and pgmate.selfplay_positions; commits after each game unless called inside a transaction block';

-- ===================================================================== self-play analysis

-- Visit counts as a probability distribution (NULL when nothing was visited).
CREATE FUNCTION pgmate.visit_policy(visits int[]) RETURNS real[]
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT array_agg((u.v / u.n)::real ORDER BY u.i)
    FROM (SELECT w.v, w.i, sum(w.v) OVER ()::float8 AS n FROM unnest(visits) WITH ORDINALITY AS w(v, i)) u
    WHERE u.n > 0
  $$;
COMMENT ON FUNCTION pgmate.visit_policy(int[]) IS
  'visit counts normalised to sum to 1: the policy target of a searched position';

-- How far the search moved away from the evaluator's priors: the total variation distance
-- 0.5 * sum |visits_i / N - prior_i|, from 0 (search agrees) to 1 (disjoint).
CREATE FUNCTION pgmate.policy_disagreement(visits int[], priors real[]) RETURNS float8
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT 0.5 * sum(abs(u.v / u.n - u.p))
    FROM (SELECT w.v, w.p, sum(w.v) OVER ()::float8 AS n FROM unnest(visits, priors) AS w(v, p)) u
    WHERE u.n > 0
    HAVING count(u.v) = count(u.p)
  $$;
COMMENT ON FUNCTION pgmate.policy_disagreement(int[], real[]) IS
  'total variation distance between the visit distribution and the priors (0 = agree, 1 = disjoint); NULL without visits or for arrays of different lengths';

-- Results per network (network_id NULL: pure MCTS).
CREATE VIEW pgmate.selfplay_results AS
  WITH by_termination AS (
    SELECT g.network_id, coalesce(g.termination, 'unknown') AS termination, count(*) AS games,
           count(*) FILTER (WHERE g.result = '1-0') AS white_wins,
           count(*) FILTER (WHERE g.result = '1/2-1/2') AS draws,
           count(*) FILTER (WHERE g.result = '0-1') AS black_wins,
           sum(g.ply_count) AS plies
    FROM pgmate.games g
    WHERE g.source = 'selfplay'
    GROUP BY g.network_id, coalesce(g.termination, 'unknown'))
  SELECT network_id,
         sum(games)::bigint AS games,
         sum(white_wins)::bigint AS white_wins,
         sum(draws)::bigint AS draws,
         sum(black_wins)::bigint AS black_wins,
         round((sum(white_wins) + 0.5 * sum(draws)) / sum(games), 3) AS white_score,
         round(sum(plies) / sum(games), 1) AS mean_plies,
         jsonb_object_agg(termination, games) AS terminations
  FROM by_termination
  GROUP BY network_id;
COMMENT ON VIEW pgmate.selfplay_results IS
  'self-play games per network (NULL = pure MCTS): wins, draws, losses, White''s points per game, mean length, terminations';

-- Game lengths as a histogram: buckets of `bucket` plies, empty ones included, with a
-- bar of up to 40 characters scaled to the fullest bucket of each network.
CREATE FUNCTION pgmate.selfplay_lengths(bucket int DEFAULT 20)
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
COMMENT ON FUNCTION pgmate.selfplay_lengths(int) IS
  'histogram of self-play game lengths per network: buckets of `bucket` plies with a text bar';

-- First moves: how often each was played, how it scored, how the search valued the start
-- position in those games and what share of the root visits the move got.
CREATE VIEW pgmate.selfplay_first_moves AS
  SELECT g.network_id,
         san(p.board, p.played) AS first_move,
         count(*) AS games,
         round(avg(CASE g.result WHEN '1-0' THEN 1 WHEN '1/2-1/2' THEN 0.5 ELSE 0 END), 3) AS white_score,
         round(avg(p.value)::numeric, 3) AS mean_root_value,
         round(avg(p.visits[array_position(p.moves, p.played)] / t.total)::numeric, 3) AS visit_share
  FROM pgmate.games g
  JOIN pgmate.selfplay_positions p ON p.game_id = g.id AND p.ply = 0
  CROSS JOIN LATERAL (SELECT nullif(sum(v), 0)::float8 AS total FROM unnest(p.visits) v) t
  WHERE g.source = 'selfplay'
  GROUP BY g.network_id, san(p.board, p.played);
COMMENT ON VIEW pgmate.selfplay_first_moves IS
  'self-play first moves per network: games, White''s score, mean root value at ply 0 (side to move''s view), mean share of the root visits';

-- Positions where the search disagreed most with the evaluator's priors: the move the
-- priors liked best and the one the search visited most (NULL where several moves share
-- the top, as with the uniform priors of pure MCTS), each with its share.
CREATE VIEW pgmate.selfplay_surprises AS
  SELECT p.game_id, g.network_id, p.ply, p.board,
         round(f.disagreement::numeric, 3) AS disagreement,
         CASE WHEN f.prior_ties = 1 THEN san(p.board, p.moves[f.prior_best]) END AS prior_move,
         round(f.top_prior::numeric, 3) AS prior_share,
         CASE WHEN f.visit_ties = 1 THEN san(p.board, p.moves[f.search_best]) END AS search_move,
         round(f.top_visits::numeric / f.total, 3) AS visit_share
  FROM pgmate.selfplay_positions p
  JOIN pgmate.games g ON g.id = p.game_id
  -- One pass over the moves (several times faster than a subquery per column): the
  -- favourites, how many moves share the top, and the distance of policy_disagreement().
  CROSS JOIN LATERAL (
    SELECT min(u.i) FILTER (WHERE u.p = u.top_prior) AS prior_best,
           count(*) FILTER (WHERE u.p = u.top_prior) AS prior_ties,
           max(u.p) AS top_prior,
           min(u.i) FILTER (WHERE u.v = u.top_visits) AS search_best,
           count(*) FILTER (WHERE u.v = u.top_visits) AS visit_ties,
           max(u.v) AS top_visits,
           sum(u.v) AS total,
           0.5 * sum(abs(u.v / u.n - u.p)) AS disagreement
    FROM (SELECT w.v, w.p, w.i, max(w.p) OVER () AS top_prior, max(w.v) OVER () AS top_visits,
                 sum(w.v) OVER ()::float8 AS n
          FROM unnest(p.visits, p.priors) WITH ORDINALITY AS w(v, p, i)) u) f
  WHERE f.total > 0
  ORDER BY f.disagreement DESC, p.game_id, p.ply;
COMMENT ON VIEW pgmate.selfplay_surprises IS
  'searched positions, most disagreement between visits and priors first: the priors'' favourite move and the search''s (NULL when tied), with their shares';

-- What the next network learns from, everything its input and heads need:
--   board, history (up to 3 earlier positions of the game, newest first) and repetitions:
--     the network's input (core/nn/encoding.h), as self-play fed it to the network;
--   policy: the search's policy target per move (visit shares);
--   wdl: the game's result for the side to move in the value head's order (win, draw, loss);
--   z: the same as one number (1 win, 0 draw, -1 loss), q: the search's root value;
--   full_search: false for a cheap search's position (playout cap randomization), whose
--     visits are too few to be a policy target.
-- A search's win/draw/loss estimate (core/mcts/search.h: the analyser's formula too).
CREATE FUNCTION pgmate.search_wdl(q real, d real) RETURNS real[]
  AS 'MODULE_PATHNAME', 'search_wdl' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.search_wdl(real, real) IS
  'a search''s value q (W - L) and draw probability d as {win, draw, loss}: ((1 - d + q) / 2, d, (1 - d - q) / 2); without d, q = 0 is a certain draw (core/mcts/search.h)';

CREATE VIEW pgmate.training_targets AS
  SELECT p.game_id, g.network_id, p.ply, p.board,
         ARRAY(SELECT h.board FROM pgmate.selfplay_positions h
               WHERE h.game_id = p.game_id AND h.ply BETWEEN p.ply - 3 AND p.ply - 1
               ORDER BY h.ply DESC) AS history,
         p.repetitions, p.moves,
         coalesce(p.policy, pgmate.visit_policy(p.visits)) AS policy,
         t.wdl, (t.wdl[1] - t.wdl[3])::int AS z,
         p.value AS q, p.full_search, p.draw AS d
  FROM pgmate.selfplay_positions p
  JOIN pgmate.games g ON g.id = p.game_id,
  LATERAL (SELECT CASE WHEN g.result = '1/2-1/2' THEN '{0,1,0}'
                       WHEN (g.result = '1-0') = (side_to_move(p.board) = 'white') THEN '{1,0,0}'
                       ELSE '{0,0,1}' END::real[] AS wdl) t
  WHERE g.result IN ('1-0', '0-1', '1/2-1/2');
COMMENT ON VIEW pgmate.training_targets IS
  'one row per self-play position: the network input (board, history, repetitions), policy target, value target wdl in head order (win, draw, loss for the side to move) and as z, root value q, full or cheap search, root draw probability d';
