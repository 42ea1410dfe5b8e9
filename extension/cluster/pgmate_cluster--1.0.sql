-- pgmate_cluster 1.0: pgmate's game database over shards, installed on the coordinator only.
-- Each shard is a PostgreSQL server with pgmate, holding the games whose id modulo the
-- shards' count is its number, with its own position index and explorer counts. The
-- coordinator routes games to the shards through a partitioned table of postgres_fdw
-- foreign partitions, and runs each search on every shard at once through PL/Proxy,
-- combining the rows into exactly the answer of one server holding every game.
--
-- Why the game id, modulo the shards: every search of the index answers game ids, so a
-- game's shard is known from its id alone; and each shard can give ids itself (its
-- sequence steps by the shards' count from its own number), so imports run on every
-- shard at once without asking the coordinator for ids (scripts/shards.sh sets them).
\echo Use "CREATE EXTENSION pgmate_cluster CASCADE" to load this file. \quit

-- ===================================================================== the shards
-- The shards' count, which routes a game: its id modulo it.
CREATE TABLE @extschema@.settings (
  one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
  shards  int CHECK (shards >= 1)
);
INSERT INTO @extschema@.settings DEFAULT VALUES;

-- add_shards makes the PL/Proxy cluster pgmate_shards (its partitions p0..pN-1: N a power
-- of two, as PL/Proxy requires), a postgres_fdw server per shard (async: a scan of the
-- games reads every shard at once; pgmate's operators and functions shipped to them),
-- user mappings for the calling role, and pgmate_cluster.games: every shard's games as
-- one partitioned table, a foreign partition a shard.
CREATE FUNCTION @extschema@.add_shards(conninfos text[]) RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  n int := cardinality(conninfos);
  plproxy_options text := '';
  fdw_options text;
  k int;
  types text := (SELECT quote_ident(n.nspname) FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
                 WHERE e.extname = 'pgmate');  -- where board and move are
BEGIN
  IF n IS NULL OR n < 1 OR n & (n - 1) <> 0 THEN
    RAISE EXCEPTION 'pgmate_cluster: the shards'' count must be a power of two (PL/Proxy''s rule), not %', coalesce(n, 0)
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF (SELECT shards FROM @extschema@.settings) IS NOT NULL THEN
    RAISE EXCEPTION 'pgmate_cluster: the shards are set already (pgmate_cluster.shards lists them)'
      USING ERRCODE = 'duplicate_object';
  END IF;
  EXECUTE format($sql$
    CREATE TABLE @extschema@.games (
      id              bigint NOT NULL DEFAULT @extschema@.next_game_id(),
      source          text NOT NULL DEFAULT 'manual',
      event           text,
      site            text,
      date            text,
      round           text,
      white           text,
      black           text,
      result          text NOT NULL DEFAULT '*',
      termination     text,
      start           %1$s.board NOT NULL DEFAULT 'startpos',
      moves           %1$s.move[] NOT NULL DEFAULT '{}',
      tags            jsonb NOT NULL DEFAULT '{}',
      imported_at     timestamptz NOT NULL DEFAULT now(),
      network_id      bigint,
      selfplay        jsonb,
      match_id        bigint,
      arena           jsonb,
      movetext_result text,
      clocks          interval[]
    ) PARTITION BY LIST ((id %% %2$s))$sql$, types, n);
  COMMENT ON TABLE @extschema@.games IS
    'every shard''s games (the columns a row stores; the generated ones are the shards''), a foreign partition a shard: game id modulo the shards'' count';
  FOR k IN 0 .. n - 1 LOOP
    IF conninfos[k + 1] !~ '^\s*([a-z_]+=\S+\s*)+$' THEN
      RAISE EXCEPTION 'pgmate_cluster: shard % must be given as key=value pairs (host=... port=... dbname=...), not %',
        k, conninfos[k + 1] USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT string_agg(format('%I %L', m[1], m[2]), ', ') INTO fdw_options
      FROM regexp_matches(conninfos[k + 1], '([a-z_]+)=(\S+)', 'g') m WHERE m[1] <> 'user';
    -- without a user: PL/Proxy connects to the shards as the calling role, whose grants there decide
    plproxy_options := plproxy_options || format('%sp%s %L', CASE WHEN k > 0 THEN ', ' ELSE '' END, k,
      (SELECT string_agg(m[1] || '=' || m[2], ' ') FROM regexp_matches(conninfos[k + 1], '([a-z_]+)=(\S+)', 'g') m
       WHERE m[1] <> 'user'));
    EXECUTE format('CREATE SERVER pgmate_shard_%s FOREIGN DATA WRAPPER postgres_fdw OPTIONS (%s, async_capable %L, '
                   'extensions %L, fetch_size %L, batch_size %L)', k, fdw_options, 'true', 'pgmate', '10000', '1000');
    EXECUTE format('CREATE USER MAPPING FOR CURRENT_USER SERVER pgmate_shard_%s', k);
    EXECUTE format('CREATE FOREIGN TABLE @extschema@.games_%s PARTITION OF @extschema@.games FOR VALUES IN (%s) '
                   'SERVER pgmate_shard_%s OPTIONS (schema_name %L, table_name %L)', k, k, k, 'pgmate', 'games');
  END LOOP;
  EXECUTE format('CREATE SERVER pgmate_shards FOREIGN DATA WRAPPER plproxy OPTIONS (%s)', plproxy_options);
  EXECUTE 'CREATE USER MAPPING FOR PUBLIC SERVER pgmate_shards';
  UPDATE @extschema@.settings SET shards = n;
  RETURN n;
END $$;
REVOKE ALL ON FUNCTION @extschema@.add_shards(text[]) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.add_shards(text[]) IS
  'sets the shards (connection strings of key=value pairs, a power of two of them; shard k holds the games whose id modulo their count is k): the PL/Proxy cluster pgmate_shards, a postgres_fdw server and a foreign partition of pgmate_cluster.games each; returns their count';

CREATE VIEW @extschema@.shards AS
  SELECT substr(s.srvname, length('pgmate_shard_') + 1)::int AS shard, s.srvoptions AS options
  FROM pg_foreign_server s WHERE s.srvname ~ '^pgmate_shard_[0-9]+$';

-- A game id from a shard's own sequence (any shard): a shard gives ids equal to its number
-- modulo the shards' count, so the game goes to the shard that gave its id.
CREATE FUNCTION @extschema@.next_game_id() RETURNS bigint AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ANY;
  SELECT nextval('pgmate.games_id_seq');
$$ LANGUAGE plproxy;

-- ===================================================================== on every shard
-- Each runs its query on every shard at once (PL/Proxy) and returns all their rows.
CREATE FUNCTION @extschema@.shard_position_count(board_text text) RETURNS SETOF bigint AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT pgmate.position_count(board_text::board);
$$ LANGUAGE plproxy;

CREATE FUNCTION @extschema@.shard_position_games(board_text text, max_count bigint) RETURNS SETOF bigint AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT pgmate.position_games(board_text::board, max_count);
$$ LANGUAGE plproxy;

CREATE FUNCTION @extschema@.shard_explorer_parts(board_text text, filters_text text,
    OUT move text, OUT move_bits int, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT rated bigint, OUT rating_sum bigint, OUT last_month int, OUT last_played text)
  RETURNS SETOF record AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT move::text, move_bits, san, games, white_wins, draws, black_wins, rated, rating_sum, last_month, last_played
  FROM pgmate.explorer_parts(board_text::board, filters_text::jsonb);
$$ LANGUAGE plproxy;

-- The games that reach a material, a pattern, or whose moves include one of moves (ids).
CREATE FUNCTION @extschema@.shard_games_search(search_kind text, search_text text) RETURNS SETOF bigint AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT g.id FROM pgmate.games g
  WHERE CASE search_kind WHEN 'material' THEN pgmate.game_reaches_material(g, search_text)
                         WHEN 'pattern' THEN pgmate.game_reaches_pattern(g, search_text)
                         WHEN 'moves' THEN g.moves && search_text::move[] END;
$$ LANGUAGE plproxy;

-- A game's analysis (pgmate.move_evals and pgmate.game_accuracy as JSON rows), from the
-- shard that holds it.
CREATE FUNCTION @extschema@.shard_game_analysis(analysis_view text, game_id bigint) RETURNS SETOF jsonb AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT to_jsonb(v) FROM pgmate.move_evals v WHERE analysis_view = 'move_evals' AND v.game = game_id
  UNION ALL
  SELECT to_jsonb(v) FROM pgmate.game_accuracy v WHERE analysis_view = 'game_accuracy' AND v.game = game_id;
$$ LANGUAGE plproxy;

-- A shard's top games of a position.
CREATE FUNCTION @extschema@.shard_explorer_top_games(board_text text, max_games int,
                                                     OUT game bigint, OUT average_rating int) RETURNS SETOF record AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT game, average_rating FROM pgmate.explorer_top_games(board_text::board, max_games);
$$ LANGUAGE plproxy;

-- The PGN of those of the games that a shard holds (to_pgn; with_evals:
-- pgmate.to_pgn_with_evals, the shard's evaluations), for pgmate export.
CREATE FUNCTION @extschema@.shard_games_pgn(ids bigint[], with_evals boolean, engine text, limits text,
                                            OUT id bigint, OUT pgn text) RETURNS SETOF record AS $$
  CLUSTER 'pgmate_shards';
  RUN ON ALL;
  SELECT g.id, CASE WHEN with_evals THEN pgmate.to_pgn_with_evals(g, engine, limits) ELSE to_pgn(g) END AS pgn
  FROM pgmate.games g WHERE g.id = ANY (ids);
$$ LANGUAGE plproxy;

-- ===================================================================== searches
-- The same names and answers as pgmate's, over every shard's games. They run as the caller
-- (on the shards too), with the names they use resolved as at install (this schema, pgmate's,
-- pg_catalog first), never through the caller's search path.
CREATE FUNCTION @extschema@.position_count(board board) RETURNS bigint
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT coalesce(sum(n), 0)::bigint FROM @extschema@.shard_position_count(board::text) n
$$;
COMMENT ON FUNCTION @extschema@.position_count(board) IS 'how many games of every shard reached the position';

CREATE FUNCTION @extschema@.position_games(board board, max_games bigint DEFAULT NULL) RETURNS SETOF bigint
  LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
  SELECT g FROM @extschema@.shard_position_games(board::text, max_games) g WHERE board IS NOT NULL ORDER BY g LIMIT max_games
$$;
COMMENT ON FUNCTION @extschema@.position_games(board, bigint) IS
  'ids of the games of every shard that reached the position, ascending (at most max_games of them)';

-- The explorer's rows from every shard's parts: sums, and White's score and the average
-- rating computed from the sums as pgmate does from one server's.
CREATE FUNCTION @extschema@.combined_explorer(board text, filters text,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8, OUT average_rating int, OUT last_played text)
  RETURNS SETOF record LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
  SELECT p.move::move, min(p.san), sum(p.games)::bigint, sum(p.white_wins)::bigint, sum(p.draws)::bigint,
         sum(p.black_wins)::bigint,
         CASE WHEN sum(p.white_wins + p.draws + p.black_wins) > 0
              THEN (sum(p.white_wins)::float8 + 0.5::float8 * sum(p.draws)::float8)
                   / sum(p.white_wins + p.draws + p.black_wins)::float8 END,
         CASE WHEN sum(p.rated) > 0 THEN div(2 * sum(p.rating_sum) + sum(p.rated), 2 * sum(p.rated))::int END,
         (array_agg(p.last_played ORDER BY p.last_month DESC NULLS LAST))[1]
  FROM @extschema@.shard_explorer_parts(board, filters) p
  GROUP BY p.move, p.move_bits
  ORDER BY sum(p.games) DESC, p.move_bits
$$;

CREATE FUNCTION @extschema@.explorer(board board,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8) RETURNS SETOF record
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT move, san, games, white_wins, draws, black_wins, score FROM @extschema@.combined_explorer(board::text, NULL)
$$;
COMMENT ON FUNCTION @extschema@.explorer(board) IS 'pgmate.explorer over every shard''s games';

CREATE FUNCTION @extschema@.explorer(board board, filters jsonb,
    OUT move move, OUT san text, OUT games bigint, OUT white_wins bigint, OUT draws bigint,
    OUT black_wins bigint, OUT score float8, OUT average_rating int, OUT last_played text) RETURNS SETOF record
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT * FROM @extschema@.combined_explorer(board::text, filters::text)
$$;
COMMENT ON FUNCTION @extschema@.explorer(board, jsonb) IS 'pgmate.explorer(board, filters) over every shard''s games';

-- Every shard's best max_games, then the best of those: the cluster's top games.
CREATE FUNCTION @extschema@.explorer_top_games(board board, max_games int DEFAULT 4,
                                               OUT game bigint, OUT average_rating int) RETURNS SETOF record
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT t.game, t.average_rating FROM @extschema@.shard_explorer_top_games(board::text, max_games) t
  ORDER BY t.average_rating DESC, t.game LIMIT max_games
$$;
COMMENT ON FUNCTION @extschema@.explorer_top_games(board, int) IS
  'the rated games of every shard that reached the position with the highest players'' average rating, best first (ties: the lower id)';

CREATE FUNCTION @extschema@.games_reaching_material(material text) RETURNS SETOF bigint
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT g FROM @extschema@.shard_games_search('material', material) g ORDER BY g
$$;
CREATE FUNCTION @extschema@.games_reaching_pattern(pattern text) RETURNS SETOF bigint
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT g FROM @extschema@.shard_games_search('pattern', pattern) g ORDER BY g
$$;
CREATE FUNCTION @extschema@.games_with_moves(moves move[]) RETURNS SETOF bigint
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT g FROM @extschema@.shard_games_search('moves', moves::text) g ORDER BY g
$$;
COMMENT ON FUNCTION @extschema@.games_reaching_material(text) IS 'ids of the games of every shard that reach the material (pgmate.game_reaches_material)';
COMMENT ON FUNCTION @extschema@.games_reaching_pattern(text) IS 'ids of the games of every shard that reach the pattern (pgmate.game_reaches_pattern)';
COMMENT ON FUNCTION @extschema@.games_with_moves(move[]) IS 'ids of the games of every shard that play one of the moves (moves && array)';

CREATE FUNCTION @extschema@.move_evals(game bigint) RETURNS SETOF jsonb
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT r FROM @extschema@.shard_game_analysis('move_evals', game) r ORDER BY (r ->> 'ply')::int, r ->> 'engine', r ->> 'limits'
$$;
CREATE FUNCTION @extschema@.game_accuracy(game bigint) RETURNS SETOF jsonb
  LANGUAGE sql STABLE STRICT SET search_path FROM CURRENT AS $$
  SELECT r FROM @extschema@.shard_game_analysis('game_accuracy', game) r ORDER BY r::text
$$;
CREATE FUNCTION @extschema@.games_pgn(ids bigint[], with_evals boolean DEFAULT false, engine text DEFAULT NULL,
                                      limits text DEFAULT NULL, OUT id bigint, OUT pgn text) RETURNS SETOF record
  LANGUAGE sql STABLE SET search_path FROM CURRENT AS $$
  SELECT p.id, p.pgn FROM @extschema@.shard_games_pgn(ids, coalesce(with_evals, false), engine, limits) p ORDER BY p.id
$$;
COMMENT ON FUNCTION @extschema@.games_pgn(bigint[], boolean, text, text) IS
  'the PGN of the games with these ids, from the shards that hold them, by id (with_evals: with the evaluations of engine and limits, as pgmate.to_pgn_with_evals); what pgmate export writes from a coordinator';
COMMENT ON FUNCTION @extschema@.move_evals(bigint) IS 'the game''s rows of pgmate.move_evals, as JSON, from the shard that holds it';
COMMENT ON FUNCTION @extschema@.game_accuracy(bigint) IS 'the game''s rows of pgmate.game_accuracy, as JSON, from the shard that holds it';
