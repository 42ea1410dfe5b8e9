-- pgmate 0.11.0 -> 0.12.0: a stored network keeps its whole configuration, never a preset's
-- name (the tiny preset has no attention any more; networks made as {"preset": "tiny"}
-- before keep the two attention blocks their weights have); a new learning run on a CUDA
-- worker trains at a batch of 1,024 unless given.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.12.0'" to load this file. \quit

-- ===================================================================== networks
CREATE FUNCTION pgmate.weights_config(weights bytea) RETURNS jsonb
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL RESTRICTED
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
    RETURN NULL;  -- not UTF-8, not JSON
  END
  $$;

COMMENT ON FUNCTION pgmate.weights_config(bytea) IS
  'the network configuration stored in safetensors weights (their pgmate_config metadata); NULL for other bytes';

CREATE OR REPLACE FUNCTION pgmate.init_network(name text, config jsonb DEFAULT '{}', seed bigint DEFAULT 0)
  RETURNS bigint LANGUAGE sql VOLATILE
  AS $$
    WITH made AS (SELECT pgmate.network_init_weights(init_network.config::text, init_network.seed) AS weights)
    INSERT INTO pgmate.networks (name, config, weights)
    SELECT init_network.name, pgmate.weights_config(made.weights), made.weights FROM made
    RETURNING id
  $$;

CREATE OR REPLACE FUNCTION pgmate.install_network(name text DEFAULT 'default') RETURNS bigint
  LANGUAGE plpgsql VOLATILE STRICT
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

-- ===================================================================== the learning loop
CREATE FUNCTION pgmate.learning_device_defaults(settings jsonb, given jsonb, device text) RETURNS jsonb
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT CASE WHEN given ? 'batch' OR device NOT LIKE 'cuda%' THEN settings
                ELSE settings || jsonb_build_object('batch', 1024)
                     || CASE WHEN given ? 'lr' THEN '{}'::jsonb
                             ELSE jsonb_build_object('lr', round((settings->>'lr')::numeric * sqrt(8.0), 6)) END
           END
  $$;

COMMENT ON FUNCTION pgmate.learning_device_defaults(jsonb, jsonb, text) IS
  'a new learning run''s batch and learning rate on a CUDA worker where not given: 1024 and the default rate times sqrt(8)';

CREATE OR REPLACE VIEW pgmate.learning_options AS
  SELECT * FROM (VALUES
    (1, 'network', 'int', 1, 9.2e18, NULL::text[], NULL::jsonb, true,
        'a new run starts from this network (default: a new network of the preset)'),
    (2, 'preset', 'text', NULL, NULL, '{tiny,small,seed}', '"small"', false, 'network preset of a new run without network'),
    (3, 'games', 'int', 1, 100000, NULL, '32', false, 'self-play games per iteration'),
    (4, 'simulations', 'int', 1, 100000, NULL, '32', false, 'search simulations per move in self-play'),
    (5, 'search', 'text', NULL, NULL, '{puct,gumbel}', '"gumbel"', false, 'self-play root search'),
    (6, 'parallel', 'int', 1, 4096, NULL, '16', false, 'self-play games in progress at once'),
    (7, 'max_plies', 'int', 10, 100000, NULL, '300', false, 'self-play and arena games end as draws after this many plies'),
    (8, 'full_search_fraction', 'number', 0, 1, NULL, '1', false, 'share of moves searched in full (playout cap randomization); the rest get cheap_simulations and are no policy target'),
    (9, 'cheap_simulations', 'int', 1, 100000, NULL, NULL, false, 'simulations of a cheap search (default: simulations / 4)'),
    (10, 'steps', 'int', 1, 10000000, NULL, NULL, false, 'training steps per iteration (default: as many as samples_per_position asks for)'),
    (11, 'batch', 'int', 1, 8192, NULL, '128', false, 'positions per training step (a new run on a CUDA worker: 1024, see learning_device_defaults)'),
    (12, 'lr', 'number', 1e-7, 10, NULL, NULL, false, 'AdamW learning rate (default 0.0003 when the run starts from a network, else 0.001, times sqrt(8) with the CUDA batch of 1024; escalation level 2 halves it)'),
    (13, 'optimizer_state', 'text', NULL, NULL, '{carry,fresh}', '"carry"', false, 'carry: each training continues the AdamW moments of the one that made the current network (a veto starts afresh); fresh: a new optimizer every iteration'),
    (14, 'window', 'int', 1, 100000000, NULL, '20000', false, 'newest self-play positions trained on'),
    (15, 'pretrain_mix', 'number', 0, 0.95, NULL, NULL, false, 'share of pretraining rows in the training data (default 0.5 with pretrain_data, else 0)'),
    (16, 'pretrain_data', 'text', NULL, NULL, NULL, NULL, false, 'a query of pretraining rows: board, history, repetitions, played, wdl (as pgmate.game_targets)'),
    (17, 'kl_weight', 'number', 0, 100, NULL, NULL, false, 'weight of KL to the start network (default 1 when the run starts from a network, else 0)'),
    (18, 'value_target', 'text', NULL, NULL, '{z,q,mix}', '"z"', false, 'value target: game result z, search value q, or a mix'),
    (19, 'q_ratio', 'number', 0, 1, NULL, '0.5', false, 'share of q in the value target with value_target mix'),
    (20, 'sample_one_in', 'int', 1, 1000, NULL, '1', false, 'train on 1 of every k positions of a game'),
    (21, 'holdout', 'text', NULL, NULL, NULL, NULL, false, 'a query of held-out rows, measured after every training'),
    (22, 'arena_interval', 'int', 1, 1000, NULL, '4', false, 'iterations between arena rounds (the candidate of the iterations between goes on training, the best network plays self-play)'),
    (23, 'arena_games', 'int', 2, 100000, NULL, '100', false, 'games of the candidate against the best network (100: a 50-Elo-better candidate is promoted about half the time at a draw rate of 30%, see docs/learning.md)'),
    (24, 'arena_simulations', 'int', 1, 100000, NULL, NULL, false, 'simulations per move in arena games (default: simulations)'),
    (25, 'arena_search', 'text', NULL, NULL, '{puct,gumbel}', '"puct"', false, 'root search of the networks in arena games'),
    (26, 'promotion_threshold', 'number', 0, 1, NULL, NULL, false, 'promotion by score instead of promotion_los: a score against the best network of at least this promotes'),
    (27, 'promotion_elo0', 'number', -1000, 1000, NULL, '0', false, 'with promotion_elo1: the SPRT''s H0, the Elo (over the best) that must not promote'),
    (28, 'promotion_elo1', 'number', -1000, 1000, NULL, NULL, false, 'promotion by SPRT (H1: this Elo over the best, alpha = beta = 0.05; arena_games the most games): promoted only when H1 is accepted; it comes before promotion_threshold and promotion_los'),
    (29, 'veto_threshold', 'number', 0, 1, NULL, NULL, false, 'veto by score instead of veto_los: a score below this against the best, an older or the start network vetoes'),
    (30, 'veto_games', 'int', 0, 100000, NULL, '0', false, 'games against an older best and the start network in each arena round (0: none)'),
    (31, 'sanity_games', 'int', 0, 100000, NULL, '10', false, 'games against random and mcts:arena_simulations, recorded every sanity_interval arena rounds'),
    (32, 'kl_warning', 'number', 0, 100, NULL, '0.15', false, 'a KL above this is warned about'),
    (33, 'kl_arena', 'number', 0, 100, NULL, '0.3', false, 'a KL above this calls an arena round at once'),
    (34, 'seed', 'int', 0, 9.2e18, NULL, NULL, false, 'seeds self-play, sampling and arena openings (default: random)'),
    (35, 'openings', 'text', NULL, NULL, '{eco,startpos}', '"eco"', false, 'arena openings: pgmate.openings drawn by the seed (pgmate import --openings loads them), or the start position'),
    (36, 'stop_after', 'text', NULL, NULL, '{selfplay,training}', NULL, true, 'this call stops after that step of its first iteration (the iteration stays in progress)'),
    (37, 'promotion_los', 'number', 0.5, 1, NULL, '0.95', false, 'the candidate is promoted when its likelihood of superiority over the best network (pentanomial, arena_games games) is at least this: an equal network is promoted 1 - promotion_los of the time'),
    (38, 'veto_los', 'number', 0, 0.49, NULL, '0.01', false, 'the candidate is vetoed when its likelihood of superiority over the best (or an older or the start) network is below this'),
    (39, 'sanity_interval', 'int', 1, 1000, NULL, '5', false, 'arena rounds between the sanity games (against random and pure MCTS)'),
    (40, 'samples_per_position', 'number', 0.01, 1000, NULL, '3', false, 'without steps: each iteration trains ceil(this x its new self-play positions / (batch x (1 - pretraining share))) steps, so a position is drawn about this often while in the window, however full the window'),
    (41, 'kl_reference', 'text', NULL, NULL, '{start,best}', '"start"', false, 'the network the KL term holds the candidate to: the start network, or the best network when the iteration began')
  ) AS o (position, name, kind, low, high, choices, default_value, per_call, description);

CREATE OR REPLACE PROCEDURE pgmate.learn(run text, iterations int, options jsonb DEFAULT '{}')
  LANGUAGE plpgsql
  AS $$
  DECLARE
    r pgmate.learning_runs;
    s jsonb;
    k int;
    n int;
    label text;
    best_games int;
    done_games int;
    missing record;
    selfplay_options jsonb;
    t0 timestamptz;
    selfplay_seconds float8;
    training_seconds float8;
    arena_seconds float8;
    data_query text;
    train_options jsonb;
    candidate bigint;
    training_run bigint;
    optimizer_from bigint;
    promotion_sprt jsonb;  -- the SPRT options of the match against the best, or NULL
    steps int;             -- training steps of this iteration
    new_positions bigint;  -- its self-play positions that are training rows
    vetoes jsonb[];        -- the veto matches' results
    last_log record;
    arena_round bool;
    arena jsonb;
    m jsonb;
    older bigint;
    net_player jsonb;  -- a network in arena games, but for its id
    decision text;
    reason text;
    esc record;
    excluded int;
    game_count int;
    position_count bigint;
    window_count bigint;
    pretrain_count bigint;
    stop_after text := options->>'stop_after';
  BEGIN
    IF run IS NULL OR iterations IS NULL OR iterations < 0 THEN
      RAISE EXCEPTION 'learn: run must be a name and iterations a number >= 0'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO r FROM pgmate.learning_runs lr WHERE lr.name = run AND lr.owner = pgmate.acting_role();
    IF NOT FOUND AND EXISTS (SELECT 1 FROM pgmate.learning_runs lr WHERE lr.name = run) AND options = '{}' THEN
      -- no new run without options: say whose run of that name there is
      RAISE EXCEPTION 'learn: run "%" belongs to role %, not to %', run,
        (SELECT string_agg(lr.owner::text, ', ') FROM pgmate.learning_runs lr WHERE lr.name = run), current_user
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'A run goes on only with the rights of the role that began it: SET ROLE to that role first.';
    END IF;
    IF FOUND THEN
      IF options ? 'network' AND (options->>'network')::bigint IS DISTINCT FROM r.start_network THEN
        RAISE EXCEPTION 'learn option "network": run "%" started from network %, not %', run, r.start_network,
          options->'network' USING ERRCODE = 'invalid_parameter_value';
      END IF;
      PERFORM pgmate.learning_settings(options, r.settings);
    ELSE
      s := pgmate.learning_device_defaults(pgmate.learning_settings(options), options,
                                           coalesce(@extschema@.worker_status()->>'device', 'cpu'));
      IF options ? 'network' THEN
        IF NOT EXISTS (SELECT 1 FROM pgmate.networks WHERE id = (options->>'network')::bigint) THEN
          RAISE EXCEPTION 'learn option "network": network % not found in pgmate.networks', options->'network'
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
        candidate := (options->>'network')::bigint;
      ELSE
        candidate := pgmate.init_network(run || ' start', jsonb_build_object('preset', s->>'preset'),
                                         (s->>'seed')::bigint);
      END IF;
      INSERT INTO pgmate.learning_runs (name, settings, start_network, best_network, current_network, pretrain_mix, lr)
      VALUES (run, s, candidate, candidate, candidate, (s->>'pretrain_mix')::float8, (s->>'lr')::float8)
      RETURNING * INTO r;
      RAISE NOTICE 'learn: run "%" (%) begins with network %', run, r.id, candidate;
    END IF;
    -- The run is held by this statement (a lease, pgmate.session_is_working): it is free
    -- again when the statement ends, however it ends.
    UPDATE pgmate.learning_runs lr
    SET holder_pid = pg_backend_pid(),
        holder_backend_start = (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid()),
        holder_since = clock_timestamp(), updated_at = now()
    WHERE lr.id = r.id
      AND (lr.holder_pid = pg_backend_pid() AND lr.holder_since >= statement_timestamp()
           OR NOT pgmate.session_is_working(lr.holder_pid, lr.holder_backend_start, lr.holder_since));
    IF NOT FOUND THEN
      RAISE EXCEPTION 'learn: run "%" is being worked on by another session', run
        USING ERRCODE = 'lock_not_available';
    END IF;
    COMMIT;

    FOR round_no IN 1 .. iterations LOOP
      SELECT * INTO r FROM pgmate.learning_runs WHERE id = r.id;
      s := r.settings;
      k := r.iterations + 1;
      label := 'learn:' || r.id || ':' || k;
      n := (s->>'games')::int;

      -- 1. Self-play: games 0 .. n-1 of the iteration, each seeded by its index; the first
      -- best_games with the best network, the rest with the current one (escalation level
      -- 3). Those already stored are skipped, so a resumed iteration plays the same games.
      t0 := clock_timestamp();
      best_games := n - floor(n * r.current_share)::int;
      selfplay_options := jsonb_build_object(
        'run', label, 'seed', ((s->>'seed')::bigint + k::bigint * 1000003) % 9000000000000000000,
        'search', s->'search', 'max_plies', s->'max_plies',
        'full_search_fraction', s->'full_search_fraction', 'cheap_simulations', s->'cheap_simulations');
      FOR missing IN
        -- contiguous ranges of the game indices not stored yet
        WITH todo AS (
          SELECT x FROM generate_series(0, n - 1) x
          WHERE NOT EXISTS (SELECT 1 FROM pgmate.learning_games lg JOIN pgmate.games g ON g.id = lg.game_id
                            WHERE lg.run_id = r.id AND lg.iteration = k
                              AND (g.selfplay->>'index')::int = x)),
        grouped AS (
          SELECT x, x - row_number() OVER (ORDER BY x) AS grp, x < best_games AS by_best FROM todo)
        SELECT min(x) AS first, count(*)::int AS games, by_best FROM grouped GROUP BY grp, by_best ORDER BY 1
      LOOP
        RAISE NOTICE 'learn: run "%" iteration %: self-play games % to % of %', run, k, missing.first + 1,
          missing.first + missing.games, n;
        CALL pgmate.selfplay(missing.games, (s->>'simulations')::int,
                             CASE WHEN missing.by_best THEN r.best_network ELSE r.current_network END,
                             (s->>'parallel')::int, selfplay_options || jsonb_build_object('first_game', missing.first));
      END LOOP;
      selfplay_seconds := extract(epoch FROM clock_timestamp() - t0);
      IF stop_after = 'selfplay' THEN
        RAISE NOTICE 'learn: run "%" iteration % stops after self-play, as asked', run, k;
        EXIT;
      END IF;

      -- 2. Training: the current network on the iteration's rows; a training run of them
      -- that already finished is not repeated.
      t0 := clock_timestamp();
      data_query := format('SELECT * FROM pgmate.learning_data(%s, %s)', r.id, k);
      SELECT tr.new_network, tr.id INTO candidate, training_run FROM pgmate.training_runs tr
      WHERE tr.network_id = r.current_network AND tr.data = data_query AND tr.status = 'finished'
        AND tr.owner = r.owner
      ORDER BY tr.id DESC LIMIT 1;
      IF candidate IS NULL THEN
        -- As many steps as draw each new position about samples_per_position times while it
        -- is in the window (KataGo's fixed ratio of samples to new data), however full the
        -- window is; or the run's fixed steps.
        IF s ? 'steps' THEN
          steps := (s->>'steps')::int;
        ELSE
          SELECT count(*) INTO new_positions
          FROM pgmate.learning_games lg JOIN pgmate.selfplay_positions p ON p.game_id = lg.game_id
          WHERE lg.run_id = r.id AND lg.iteration = k AND p.full_search;
          steps := least(10000000, greatest(1, ceil((s->>'samples_per_position')::float8 * new_positions
                                                    / (s->>'sample_one_in')::int
                                                    / ((s->>'batch')::int * (1 - r.pretrain_mix))))::int);
        END IF;
        train_options := jsonb_build_object(
          'batch', s->'batch', 'optimizer', 'adamw', 'lr', r.lr, 'schedule', 'constant',
          'log_every', least(steps, 50), 'checkpoint_every', least(steps, 50),
          'seed', (s->>'seed')::bigint % 2147483647 + k, 'name', run || ' ' || k);
        IF (s->>'kl_weight')::float8 > 0 THEN
          train_options := train_options || jsonb_build_object(
            'kl_weight', s->'kl_weight',
            'kl_reference', CASE WHEN s->>'kl_reference' = 'best' THEN r.best_network ELSE r.start_network END);
        END IF;
        IF s ? 'holdout' THEN
          -- Every network of the run but the start was measured on the held-out rows at the
          -- end of the training that made it: no second measurement of the same weights.
          train_options := train_options || jsonb_build_object('holdout', s->'holdout',
                                                               'holdout_at_start', r.current_network = r.start_network);
        END IF;
        -- The optimizer goes on from the training that made the current network, unless a
        -- veto has put the best network back since (escalation starts a fresh optimizer).
        -- Runs from before this setting train with a fresh one, as they began.
        optimizer_from := NULL;
        IF s->>'optimizer_state' = 'carry' THEN
          SELECT i.training_run INTO optimizer_from FROM pgmate.learning_iterations i
          WHERE i.run_id = r.id AND i.iteration = k - 1 AND i.decision <> 'vetoed' AND i.candidate = r.current_network;
          IF optimizer_from IS NOT NULL THEN
            train_options := train_options || jsonb_build_object('optimizer_from', optimizer_from);
          END IF;
        END IF;
        -- A fresh AdamW's first steps are sign descent (every weight moves by lr, noise or
        -- not): its learning rate rises over the first steps instead.
        IF optimizer_from IS NULL THEN
          train_options := train_options || jsonb_build_object('warmup_steps', least(steps, 20));
        END IF;
        RAISE NOTICE 'learn: run "%" iteration %: training network % for % steps', run, k, r.current_network, steps;
        CALL pgmate.train(r.current_network, data_query, steps, train_options, candidate);
        SELECT tr.id INTO training_run FROM pgmate.training_runs tr
        WHERE tr.new_network = candidate AND tr.owner = r.owner;
      END IF;
      training_seconds := extract(epoch FROM clock_timestamp() - t0);
      SELECT p.policy_loss, p.value_loss, p.kl, p.holdout_top1 INTO last_log
      FROM pgmate.training_progress p WHERE p.run_id = training_run ORDER BY p.step DESC LIMIT 1;
      IF last_log.kl > (s->>'kl_warning')::float8 THEN
        RAISE WARNING 'learn: run "%" iteration %: KL to the start network is % (above %)', run, k,
          round(last_log.kl::numeric, 3), s->'kl_warning';
      END IF;
      IF stop_after = 'training' THEN
        RAISE NOTICE 'learn: run "%" iteration % stops after training (candidate %), as asked', run, k, candidate;
        EXIT;
      END IF;

      -- 3. Arena, every arena_interval iterations or when the KL is too high.
      t0 := clock_timestamp();
      arena_round := k % (s->>'arena_interval')::int = 0 OR coalesce(last_log.kl > (s->>'kl_arena')::float8, false);
      arena := NULL;
      vetoes := '{}';
      promotion_sprt := CASE WHEN s ? 'promotion_elo1'
                             THEN jsonb_build_object('sprt_elo0', s->'promotion_elo0', 'sprt_elo1', s->'promotion_elo1') END;
      -- Players are JSON objects built from checked settings, never text put together.
      net_player := jsonb_build_object('type', 'net', 'simulations', (s->>'arena_simulations')::int)
                    || CASE WHEN s->>'arena_search' = 'gumbel' THEN '{"search": "gumbel"}'::jsonb ELSE '{}' END;
      IF arena_round THEN
        RAISE NOTICE 'learn: run "%" iteration %: arena, network % against %', run, k, candidate, r.best_network;
        CALL pgmate.learning_match(label || ':best', net_player || jsonb_build_object('network', candidate),
                                   net_player || jsonb_build_object('network', r.best_network),
                                   (s->>'arena_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                   (s->>'parallel')::int, s->>'openings', promotion_sprt, m);
        arena := jsonb_build_object('best', m);
        IF (s->>'veto_games')::int > 0 THEN
          -- an older best, drawn by the seed, and the start network (when not the best itself)
          SELECT x INTO older FROM (SELECT DISTINCT i.best_network AS x FROM pgmate.learning_iterations i
                                    WHERE i.run_id = r.id) o
          WHERE x NOT IN (r.best_network, r.start_network)
          ORDER BY hashint8(x + (s->>'seed')::bigint + k) LIMIT 1;
          IF older IS NOT NULL THEN
            CALL pgmate.learning_match(label || ':older', net_player || jsonb_build_object('network', candidate),
                                       net_player || jsonb_build_object('network', older),
                                       (s->>'veto_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                       (s->>'parallel')::int, s->>'openings', NULL, m);
            arena := arena || jsonb_build_object('older', m);
            vetoes := vetoes || m;
          END IF;
          IF r.start_network <> r.best_network THEN
            CALL pgmate.learning_match(label || ':start', net_player || jsonb_build_object('network', candidate),
                                       net_player || jsonb_build_object('network', r.start_network),
                                       (s->>'veto_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                       (s->>'parallel')::int, s->>'openings', NULL, m);
            arena := arena || jsonb_build_object('start', m);
            vetoes := vetoes || m;
          END IF;
        END IF;
        -- The sanity games inform, never decide: every sanity_interval-th round only.
        IF (s->>'sanity_games')::int > 0
           AND k % ((s->>'arena_interval')::int * coalesce((s->>'sanity_interval')::int, 1)) = 0 THEN
          CALL pgmate.learning_match(label || ':random', net_player || jsonb_build_object('network', candidate),
                                     '"random"', (s->>'sanity_games')::int, (s->>'seed')::bigint + k,
                                     (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('random', m);
          CALL pgmate.learning_match(label || ':mcts', net_player || jsonb_build_object('network', candidate),
                                     jsonb_build_object('type', 'mcts', 'simulations', (s->>'arena_simulations')::int), (s->>'sanity_games')::int,
                                     (s->>'seed')::bigint + k, (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('mcts', m);
        END IF;
        decision := pgmate.learning_gate(arena->'best', vetoes, s);
        reason := format('score %s, Elo %s [%s, %s], LOS %s against the best network over %s games',
                         round((arena->'best'->>'score')::numeric, 3), round((arena->'best'->>'elo')::numeric, 1),
                         round((arena->'best'->>'elo_lower')::numeric, 1), round((arena->'best'->>'elo_upper')::numeric, 1),
                         round((arena->'best'->>'los')::numeric, 3), arena->'best'->>'games')
                  || CASE WHEN s ? 'promotion_elo1'
                          THEN format(', SPRT [%s, %s]: %s', s->>'promotion_elo0', s->>'promotion_elo1',
                                      CASE arena->'best'->>'sprt' WHEN 'H1' THEN 'H1 accepted'
                                                                  WHEN 'H0' THEN 'H0 accepted' ELSE 'undecided' END)
                          WHEN s ? 'promotion_threshold' THEN format(' (promotion at a score of %s', s->>'promotion_threshold')
                          ELSE format(' (promotion at LOS %s', s->>'promotion_los') END
                  || CASE WHEN s ? 'promotion_elo1' THEN ' (' ELSE ', ' END
                  || CASE WHEN s ? 'veto_threshold' THEN format('veto below a score of %s)', s->>'veto_threshold')
                          ELSE format('veto below LOS %s)', s->>'veto_los') END;
        IF arena ? 'older' THEN
          reason := reason || format(', %s against older network %s', round((arena->'older'->>'score')::numeric, 3), older);
        END IF;
        IF arena ? 'start' THEN
          reason := reason || format(', %s against the start network', round((arena->'start'->>'score')::numeric, 3));
        END IF;
      ELSE
        decision := 'trained';
        reason := format('no arena round (every %s iterations)', s->>'arena_interval');
      END IF;
      arena_seconds := CASE WHEN arena_round THEN extract(epoch FROM clock_timestamp() - t0) END;

      -- 4. The decision, the iteration's row and the run's new state: one transaction.
      SELECT count(*), coalesce(sum(g.ply_count), 0) INTO game_count, position_count
      FROM pgmate.learning_games lg JOIN pgmate.games g ON g.id = lg.game_id
      WHERE lg.run_id = r.id AND lg.iteration = k;
      SELECT tr.samples INTO window_count FROM pgmate.training_runs tr WHERE tr.id = training_run;
      pretrain_count := CASE WHEN r.pretrain_mix > 0
                             THEN (SELECT count(*) FROM pgmate.learning_data(r.id, k) d WHERE d.played IS NOT NULL)
                             ELSE 0 END;
      excluded := 0;
      IF decision = 'vetoed' THEN
        SELECT * INTO esc FROM pgmate.learning_escalation(least(r.veto_level + 1, 4), r.pretrain_mix, r.lr,
                                                          r.current_share);
        IF esc.exclude_share > 0 THEN
          -- the newest share of the games of the window this iteration trained on
          WITH open_games AS (SELECT DISTINCT w.game_id AS id FROM pgmate.learning_window(r.id, k) w)
          INSERT INTO pgmate.learning_exclusions (run_id, game_id, iteration)
          SELECT r.id, o.id, k FROM open_games o
          ORDER BY o.id DESC
          LIMIT ceil(esc.exclude_share * (SELECT count(*) FROM open_games));
          GET DIAGNOSTICS excluded = ROW_COUNT;
        END IF;
        UPDATE pgmate.learning_runs
        SET iterations = k, current_network = best_network, veto_level = least(veto_level + 1, 4),
            pretrain_mix = CASE WHEN settings ? 'pretrain_data' THEN esc.new_pretrain_mix ELSE pretrain_mix END,
            lr = esc.new_lr, current_share = esc.new_current_share, updated_at = now()
        WHERE id = r.id;
      ELSE
        UPDATE pgmate.learning_runs
        SET iterations = k, current_network = candidate,
            best_network = CASE WHEN decision = 'promoted' THEN candidate ELSE best_network END,
            veto_level = CASE WHEN decision = 'promoted' THEN 0 ELSE veto_level END,
            -- a promotion undoes what escalation changed
            lr = CASE WHEN decision = 'promoted' THEN (settings->>'lr')::float8 ELSE lr END,
            pretrain_mix = CASE WHEN decision = 'promoted' THEN (settings->>'pretrain_mix')::float8 ELSE pretrain_mix END,
            current_share = CASE WHEN decision = 'promoted' THEN 0 ELSE current_share END,
            updated_at = now()
        WHERE id = r.id;
      END IF;
      INSERT INTO pgmate.learning_iterations
        (run_id, iteration, best_network, candidate, training_run, games, positions, window_positions,
         pretrain_positions, policy_loss, value_loss, kl, holdout_top1, arena, promotion_score, promotion_elo,
         promotion_elo_lower, promotion_elo_upper, decision, reason, veto_level, pretrain_mix, lr, excluded_games,
         selfplay_seconds, training_seconds, arena_seconds)
      VALUES (r.id, k, r.best_network, candidate, training_run, game_count, position_count,
              window_count - pretrain_count, pretrain_count, last_log.policy_loss, last_log.value_loss, last_log.kl,
              last_log.holdout_top1, arena, (arena->'best'->>'score')::float8, (arena->'best'->>'elo')::float8,
              (arena->'best'->>'elo_lower')::float8, (arena->'best'->>'elo_upper')::float8, decision, reason,
              CASE decision WHEN 'promoted' THEN 0 WHEN 'vetoed' THEN least(r.veto_level + 1, 4) ELSE r.veto_level END,
              r.pretrain_mix, r.lr, excluded,
              selfplay_seconds, training_seconds, arena_seconds);
      RAISE NOTICE 'learn: run "%" iteration % %: %', run, k, decision, reason;
      COMMIT;
      candidate := NULL;
      training_run := NULL;
    END LOOP;
    UPDATE pgmate.learning_runs
    SET holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL, updated_at = now()
    WHERE id = r.id;
    COMMIT;
  END
  $$;

-- Rows that name a preset get the configuration their weights were made for.
UPDATE pgmate.networks SET config = pgmate.weights_config(weights)
WHERE config ? 'preset' AND pgmate.weights_config(weights) IS NOT NULL;
