-- pgmate 0.8.0 -> 0.9.0: security and reliability. Learning runs belong to the role that
-- made them and are resumed only by it; stored settings are validated again on every call;
-- engines cannot pin a backend; bounded work everywhere; locks that need a privilege.
\echo Use "ALTER EXTENSION pgmate UPDATE TO '0.9.0'" to load this file. \quit

-- The position index is written only by the extension's own code, under a lock that needs
-- a privilege (it was an advisory lock, which any role could hold).
CREATE TABLE pgmate.position_index_lock () WITH (autovacuum_enabled = false);
COMMENT ON TABLE pgmate.position_index_lock IS 'the position index''s lock (never written)';
ALTER TABLE pgmate.position_runs ADD COLUMN merged_from bigint[], ADD COLUMN part int, ADD COLUMN parts int;
ALTER FUNCTION pgmate.position_index_trigger() SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_trigger() FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge(boolean) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge(boolean) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge_part(bigint[], int, int) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_part(bigint[], int, int) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int)
  SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.position_index_merge_publish(bigint[], bigint[], int) IS
  'in one step, the runs give way to the parts merged from them (at `level`), retired; 40001 when the index changed meanwhile; 22023 unless the parts are every non-empty share of one merge of exactly these runs';
ALTER FUNCTION pgmate.position_index_clean(int, int) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_clean(int, int) FROM PUBLIC;
ALTER FUNCTION pgmate.position_index_rebuild() SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION pgmate.position_index_rebuild() FROM PUBLIC;

-- moves[1] is a game's first move: arrays numbered from elsewhere are renumbered (a slice
-- starts at 1), then refused.
UPDATE pgmate.games SET moves = moves[:] WHERE array_lower(moves, 1) <> 1;
ALTER TABLE pgmate.games ADD CONSTRAINT games_moves_numbered_from_1 CHECK (array_lower(moves, 1) = 1);

-- ============================================================ owners and leases (learning runs, training runs, matches)
-- A run or match belongs to the role that made it: only that role writes it (row-level
-- security) and goes on with it. Rows made before belong to the role that upgrades.
-- The role whose rights the caller has now (SET ROLE included), as a regrole.
CREATE FUNCTION pgmate.acting_role() RETURNS regrole
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT to_regrole(quote_ident(current_user)) $$;
COMMENT ON FUNCTION pgmate.acting_role() IS 'the current role (current_user) as a regrole: the owner of the rows it makes';

-- Whether the session `pid`, started at `backend_start`, still holds a lease it took at
-- `since`: a lease taken by a statement (a procedure) ends with it, so a statement that
-- failed, was cancelled or was followed by another one holds nothing any more; a lease of
-- the whole session (`since` NULL: a client working through many statements) ends with the
-- session. A session that ended holds nothing. Sessions of
-- other roles are visible here (the function runs as the extension's owner), but only
-- this yes or no comes out.
CREATE FUNCTION pgmate.session_is_working(pid int, backend_start timestamptz, since timestamptz) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT pid IS NOT NULL AND EXISTS (
      SELECT 1 FROM pg_stat_activity a
      WHERE a.pid = session_is_working.pid AND a.backend_start = session_is_working.backend_start
        AND (since IS NULL OR a.state IS DISTINCT FROM 'idle' AND a.query_start <= since))
  $$;
COMMENT ON FUNCTION pgmate.session_is_working(int, timestamptz, timestamptz) IS
  'whether a session still runs the statement that took a lease at a time (a dead, idle or moved-on session holds nothing)';


ALTER TABLE pgmate.training_runs ADD COLUMN owner regrole NOT NULL DEFAULT pgmate.acting_role(),
  ADD COLUMN holder_pid int, ADD COLUMN holder_backend_start timestamptz, ADD COLUMN holder_since timestamptz;
ALTER TABLE pgmate.matches ADD COLUMN owner regrole NOT NULL DEFAULT pgmate.acting_role();
ALTER TABLE pgmate.matches DROP CONSTRAINT matches_name_key, ADD UNIQUE (owner, name);
ALTER TABLE pgmate.learning_runs DROP COLUMN status,
  ADD COLUMN owner regrole NOT NULL DEFAULT pgmate.acting_role(),
  ADD COLUMN holder_pid int, ADD COLUMN holder_backend_start timestamptz, ADD COLUMN holder_since timestamptz;
ALTER TABLE pgmate.learning_runs DROP CONSTRAINT learning_runs_name_key, ADD UNIQUE (owner, name);

-- Everyone who may read them sees every run; only a run's owner writes it and its rows.
CREATE FUNCTION pgmate.is_own_training_run(run bigint) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT EXISTS (SELECT 1 FROM pgmate.training_runs r WHERE r.id = run AND r.owner = pgmate.acting_role()) $$;
COMMENT ON FUNCTION pgmate.is_own_training_run(bigint) IS 'whether a training run belongs to the current role';
ALTER TABLE pgmate.training_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY training_runs_read ON pgmate.training_runs FOR SELECT USING (true);
CREATE POLICY training_runs_owner ON pgmate.training_runs
  USING (owner = pgmate.acting_role()) WITH CHECK (owner = pgmate.acting_role());
ALTER TABLE pgmate.training_checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY training_checkpoints_read ON pgmate.training_checkpoints FOR SELECT USING (true);
CREATE POLICY training_checkpoints_owner ON pgmate.training_checkpoints
  USING (pgmate.is_own_training_run(run_id)) WITH CHECK (pgmate.is_own_training_run(run_id));
ALTER TABLE pgmate.training_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY training_progress_read ON pgmate.training_progress FOR SELECT USING (true);
CREATE POLICY training_progress_owner ON pgmate.training_progress
  USING (pgmate.is_own_training_run(run_id)) WITH CHECK (pgmate.is_own_training_run(run_id));

ALTER TABLE pgmate.matches ENABLE ROW LEVEL SECURITY;
CREATE POLICY matches_read ON pgmate.matches FOR SELECT USING (true);
CREATE POLICY matches_owner ON pgmate.matches
  USING (owner = pgmate.acting_role()) WITH CHECK (owner = pgmate.acting_role());

-- The self-play games of each iteration, recorded by pgmate.selfplay as it stores them
-- (pgmate.learning_game): the loop trains on these and on no other game, whatever label
-- another writer gives a game.
CREATE TABLE pgmate.learning_games (
  run_id    bigint NOT NULL REFERENCES pgmate.learning_runs (id) ON DELETE CASCADE,
  iteration int NOT NULL CHECK (iteration > 0),
  game_id   bigint NOT NULL REFERENCES pgmate.games (id) ON DELETE CASCADE,
  PRIMARY KEY (game_id)
);
CREATE INDEX learning_games_run_idx ON pgmate.learning_games (run_id, iteration);
COMMENT ON TABLE pgmate.learning_games IS 'the self-play games of each iteration of a learning run';
SELECT pg_catalog.pg_extension_config_dump('pgmate.learning_games', '');

-- the games of the runs so far, by their labels
INSERT INTO pgmate.learning_games (run_id, iteration, game_id)
SELECT r.id, (regexp_match(g.selfplay->>'run', '^learn:[0-9]+:([0-9]+)$'))[1]::int, g.id
FROM pgmate.games g JOIN pgmate.learning_runs r
  ON g.selfplay->>'run' ~ ('^learn:' || r.id || ':[0-9]{1,9}$')
WHERE g.source = 'selfplay';

-- Everyone who may read them sees every run; only a run's owner writes it and its rows.
CREATE FUNCTION pgmate.is_own_learning_run(run bigint) RETURNS boolean
  LANGUAGE sql STABLE PARALLEL SAFE
  AS $$ SELECT EXISTS (SELECT 1 FROM pgmate.learning_runs r WHERE r.id = run AND r.owner = pgmate.acting_role()) $$;
COMMENT ON FUNCTION pgmate.is_own_learning_run(bigint) IS 'whether a learning run belongs to the current role';
ALTER TABLE pgmate.learning_runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY learning_runs_read ON pgmate.learning_runs FOR SELECT USING (true);
CREATE POLICY learning_runs_owner ON pgmate.learning_runs
  USING (owner = pgmate.acting_role()) WITH CHECK (owner = pgmate.acting_role());
ALTER TABLE pgmate.learning_iterations ENABLE ROW LEVEL SECURITY;
CREATE POLICY learning_iterations_read ON pgmate.learning_iterations FOR SELECT USING (true);
CREATE POLICY learning_iterations_owner ON pgmate.learning_iterations
  USING (pgmate.is_own_learning_run(run_id)) WITH CHECK (pgmate.is_own_learning_run(run_id));
ALTER TABLE pgmate.learning_exclusions ENABLE ROW LEVEL SECURITY;
CREATE POLICY learning_exclusions_read ON pgmate.learning_exclusions FOR SELECT USING (true);
CREATE POLICY learning_exclusions_owner ON pgmate.learning_exclusions
  USING (pgmate.is_own_learning_run(run_id)) WITH CHECK (pgmate.is_own_learning_run(run_id));
ALTER TABLE pgmate.learning_games ENABLE ROW LEVEL SECURITY;
CREATE POLICY learning_games_read ON pgmate.learning_games FOR SELECT USING (true);
CREATE POLICY learning_games_owner ON pgmate.learning_games
  USING (pgmate.is_own_learning_run(run_id)) WITH CHECK (pgmate.is_own_learning_run(run_id));


-- Records a self-play game stored under `label` (pgmate.selfplay's option run) as a game
-- of a learning run's iteration when the label is one of the loop's ('learn:RUN:ITERATION');
-- other labels are left alone. A NULL game only checks the label. Only the run's owner may
-- play under its labels (42501).
CREATE FUNCTION pgmate.learning_game(label text, game bigint) RETURNS void
  LANGUAGE plpgsql VOLATILE
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
COMMENT ON FUNCTION pgmate.learning_game(text, bigint) IS
  'records a self-play game stored under a learning loop label (learn:RUN:ITERATION) as that iteration''s; only the run''s owner may';


DROP FUNCTION pgmate.training_begin(bigint, text, bigint, jsonb, bigint, text);
-- The bookkeeping of a run, shared by CALL pgmate.train and `pgmate train`. A run is held
-- by the statement that trains it (a lease: pgmate.session_is_working), so a run whose
-- training failed, was cancelled or whose session ended is free again at once: the same
-- training again (network, data, steps and settings, by the same role) resumes the newest
-- run of it that is still running and held by no other session, from its last checkpoint.
-- A client that trains through many statements holds the run for its whole session
-- (session_lease).
CREATE FUNCTION pgmate.training_begin(network bigint, data text, steps bigint, settings jsonb, samples bigint,
                                      data_sha256 text, session_lease boolean DEFAULT false,
                                      OUT run bigint, OUT resumed bool, OUT step bigint,
                                      OUT state bytea, OUT data_changed bool)
  LANGUAGE plpgsql VOLATILE
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
REVOKE ALL ON FUNCTION pgmate.training_begin(bigint, text, bigint, jsonb, bigint, text, boolean) FROM PUBLIC;

CREATE OR REPLACE FUNCTION pgmate.training_finish(run bigint, name text, weights bytea, state bytea) RETURNS bigint
  LANGUAGE plpgsql VOLATILE
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
  LANGUAGE sql VOLATILE
  AS $$
    UPDATE pgmate.training_runs SET status = 'failed', error = training_fail.error, finished_at = now(),
           holder_pid = NULL, holder_backend_start = NULL, holder_since = NULL
    WHERE id = run;
  $$;

CREATE OR REPLACE FUNCTION pgmate.learning_settings(given jsonb, stored jsonb DEFAULT NULL) RETURNS jsonb
  LANGUAGE plpgsql STABLE
  AS $$
  DECLARE
    spec record;
    key text;
    value jsonb;
    resolved jsonb := '{}';
    number float8;
  BEGIN
    IF given IS NULL THEN given := '{}'; END IF;
    IF jsonb_typeof(given) <> 'object' THEN
      RAISE EXCEPTION 'learn options must be a JSON object, not %', given USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR key IN SELECT jsonb_object_keys(given) LOOP
      IF key NOT IN (SELECT name FROM pgmate.learning_options) THEN
        RAISE EXCEPTION 'unknown learn option "%"', key USING ERRCODE = 'invalid_parameter_value',
          HINT = 'known: ' || (SELECT string_agg(name, ', ' ORDER BY position) FROM pgmate.learning_options);
      END IF;
    END LOOP;
    FOR spec IN SELECT * FROM pgmate.learning_options ORDER BY position LOOP
      value := given -> spec.name;
      IF value IS NULL OR value = 'null' THEN
        CONTINUE;
      END IF;
      IF spec.kind = 'text' THEN
        IF jsonb_typeof(value) <> 'string' OR (spec.choices IS NOT NULL AND NOT (value #>> '{}' = ANY (spec.choices))) THEN
          RAISE EXCEPTION 'learn option "%": % is not %', spec.name, value,
            coalesce('one of ' || array_to_string(spec.choices, ', '), 'a string')
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
      ELSE
        IF jsonb_typeof(value) <> 'number' THEN
          RAISE EXCEPTION 'learn option "%": % is not a number', spec.name, value USING ERRCODE = 'invalid_parameter_value';
        END IF;
        number := (value #>> '{}')::float8;
        -- An integer is written as one (2, not 2.0 or 2e0): the value is stored as given.
        IF (spec.kind = 'int' AND value::text !~ '^-?[0-9]+$') OR number < spec.low OR number > spec.high THEN
          RAISE EXCEPTION 'learn option "%": % is not % from % to %', spec.name, value,
            CASE spec.kind WHEN 'int' THEN 'an integer' ELSE 'a number' END, spec.low, spec.high
            USING ERRCODE = 'invalid_parameter_value';
        END IF;
      END IF;
      IF NOT spec.per_call THEN
        resolved := resolved || jsonb_build_object(spec.name, value);
      END IF;
    END LOOP;
    IF stored IS NOT NULL THEN
      BEGIN
        PERFORM pgmate.learning_settings(stored);
      EXCEPTION WHEN invalid_parameter_value THEN
        RAISE EXCEPTION 'the learning run''s stored settings are not valid: %', SQLERRM
          USING ERRCODE = 'invalid_parameter_value';
      END;
      IF EXISTS (SELECT 1 FROM pgmate.learning_options o WHERE o.per_call AND stored ? o.name) THEN
        RAISE EXCEPTION 'the learning run''s stored settings are not valid: they hold a per-call option'
          USING ERRCODE = 'invalid_parameter_value';
      END IF;
      FOR key, value IN SELECT * FROM jsonb_each(resolved) LOOP
        IF stored -> key IS DISTINCT FROM value THEN
          RAISE EXCEPTION 'learn option "%": the run has %, not %', key, coalesce(stored -> key, 'null'), value
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A run''s settings stay as it began; start another run to change them.';
        END IF;
      END LOOP;
      RETURN stored;
    END IF;
    -- Defaults, some following others.
    FOR spec IN SELECT * FROM pgmate.learning_options WHERE NOT per_call AND default_value IS NOT NULL LOOP
      IF NOT resolved ? spec.name THEN
        resolved := resolved || jsonb_build_object(spec.name, spec.default_value);
      END IF;
    END LOOP;
    IF NOT resolved ? 'cheap_simulations' THEN
      resolved := resolved || jsonb_build_object('cheap_simulations', greatest(1, (resolved->>'simulations')::int / 4));
    END IF;
    IF NOT resolved ? 'arena_simulations' THEN
      resolved := resolved || jsonb_build_object('arena_simulations', resolved->'simulations');
    END IF;
    IF NOT resolved ? 'veto_games' THEN
      resolved := resolved || jsonb_build_object('veto_games', 2 * ceil((resolved->>'arena_games')::int / 4.0)::int);
    END IF;
    IF NOT resolved ? 'pretrain_mix' THEN
      resolved := resolved || jsonb_build_object('pretrain_mix', CASE WHEN resolved ? 'pretrain_data' THEN 0.5 ELSE 0 END);
    END IF;
    -- Fine-tuning a given network: a smaller step and a firmer hold on its policy, chosen on
    -- validation games (bench/RESULTS.md, "learn"): at the learning rate of a new network
    -- the first 100 steps cost it two points of top-1 on games it never saw.
    IF NOT resolved ? 'lr' THEN
      resolved := resolved || jsonb_build_object('lr', CASE WHEN given ? 'network' THEN 0.0003 ELSE 0.001 END);
    END IF;
    IF NOT resolved ? 'kl_weight' THEN
      resolved := resolved || jsonb_build_object('kl_weight', CASE WHEN given ? 'network' THEN 1.0 ELSE 0 END);
    END IF;
    IF NOT resolved ? 'seed' THEN
      resolved := resolved || jsonb_build_object('seed', floor(random() * 2147483647)::bigint);
    END IF;
    IF (resolved->>'pretrain_mix')::float8 > 0 AND NOT resolved ? 'pretrain_data' THEN
      RAISE EXCEPTION 'learn option "pretrain_mix": % needs "pretrain_data", a query of pretraining rows',
        resolved->'pretrain_mix' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (resolved->>'arena_games')::int % 2 <> 0 OR (resolved->>'veto_games')::int % 2 <> 0
       OR (resolved->>'sanity_games')::int % 2 <> 0 THEN
      RAISE EXCEPTION 'learn options "arena_games", "veto_games" and "sanity_games" must be even (games are played in pairs, colours swapped)'
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF resolved ? 'promotion_elo1' AND (resolved->>'promotion_elo1')::float8 <= (resolved->>'promotion_elo0')::float8 THEN
      RAISE EXCEPTION 'learn option "promotion_elo1" (%) must be above "promotion_elo0" (%)',
        resolved->'promotion_elo1', resolved->'promotion_elo0' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF (resolved->>'veto_threshold')::float8 >= (resolved->>'promotion_threshold')::float8 THEN
      RAISE EXCEPTION 'learn option "veto_threshold" (%) must be below "promotion_threshold" (%)',
        resolved->'veto_threshold', resolved->'promotion_threshold' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF resolved->>'openings' = 'eco' AND NOT EXISTS (SELECT 1 FROM pgmate.openings) THEN
      RAISE EXCEPTION 'learn option "openings": "eco" needs the ECO lines in pgmate.openings'
        USING ERRCODE = 'invalid_parameter_value',
              HINT = 'Load them with pgmate import --openings, or give "openings": "startpos".';
    END IF;
    RETURN resolved;
  END
  $$;

-- Run `run`'s row, for its owner only: the training rows of a run come from its stored
-- settings (pretrain_data is a query), which run with no other role's rights (22023 for no
-- such run, 42501 for another role's).
CREATE FUNCTION pgmate.own_learning_run(run bigint) RETURNS pgmate.learning_runs
  LANGUAGE plpgsql STABLE
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
    RETURN r;
  END
  $$;
COMMENT ON FUNCTION pgmate.own_learning_run(bigint) IS
  'a learning run''s row, for its owner only (42501 for another role)';

-- The window of iteration `iteration` of a run: the newest `window` full-search positions
-- of the run's self-play games so far (excluded games left out; 1 in sample_one_in per
-- game; value target z, q or a mix), newest game first, with their games' ids (a veto
-- excludes the newest of these games: pgmate.learning_escalation).
CREATE FUNCTION pgmate.learning_window(run bigint, iteration int)
  RETURNS TABLE (game_id bigint, ply int, board board, history board[], repetitions int, moves move[],
                 policy real[], wdl real[])
  LANGUAGE plpgsql STABLE
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
                  ELSE ARRAY[(1 - q_ratio) * t.wdl[1] + q_ratio * greatest(t.q, 0),
                             (1 - q_ratio) * t.wdl[2] + q_ratio * (1 - abs(t.q)),
                             (1 - q_ratio) * t.wdl[3] + q_ratio * greatest(-t.q, 0)]::real[] END
      FROM pgmate.training_targets t
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
REVOKE ALL ON FUNCTION pgmate.learning_window(bigint, int) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.learning_window(bigint, int) IS
  'the window of an iteration of a learning run: its newest self-play positions, with their games'' ids';

CREATE OR REPLACE FUNCTION pgmate.learning_data(run bigint, iteration int)
  RETURNS TABLE (board board, history board[], repetitions int, played move, moves move[], policy real[], wdl real[])
  LANGUAGE plpgsql STABLE
  AS $$
  #variable_conflict use_column
  DECLARE
    r pgmate.learning_runs;
    s jsonb;
    window_rows bigint;
    mix float8;
    pretrain_rows bigint;
  BEGIN
    -- The run's pretrain_data is its owner's query: it runs with its owner's rights only.
    r := pgmate.own_learning_run(run);
    s := r.settings;
    -- the iteration's own pretraining share: as it was when the iteration began
    mix := coalesce((SELECT i.pretrain_mix FROM pgmate.learning_iterations i
                     WHERE i.run_id = run AND i.iteration = learning_data.iteration), r.pretrain_mix);
    RETURN QUERY
      SELECT w.board, w.history, w.repetitions, NULL::move, w.moves, w.policy, w.wdl
      FROM pgmate.learning_window(run, iteration) w
      ORDER BY w.game_id DESC, w.ply;
    GET DIAGNOSTICS window_rows = ROW_COUNT;
    pretrain_rows := CASE WHEN mix > 0 THEN floor(window_rows * mix / (1 - mix))::bigint ELSE 0 END;
    IF pretrain_rows > 0 THEN
      RETURN QUERY EXECUTE format(
        'SELECT p.board, p.history, p.repetitions::int, p.played, NULL::move[], NULL::real[], p.wdl::real[] '
        'FROM (%s) p ORDER BY hashtext(p.board::text || %L), p.played::text, p.wdl::text LIMIT %s',
        s->>'pretrain_data', ':' || run || ':' || iteration, pretrain_rows);
    END IF;
  END
  $$;

CREATE OR REPLACE PROCEDURE pgmate.learning_match(name text, candidate jsonb, opponent jsonb, games int, seed bigint,
                                       max_plies int, parallel int, openings text, extra jsonb,
                                       INOUT result jsonb DEFAULT NULL)
  LANGUAGE plpgsql
  AS $$
  DECLARE
    own_match bigint;
  BEGIN
    -- Only the caller's own match of that name counts (pgmate.arena plays and resumes the
    -- caller's own matches too).
    IF NOT EXISTS (SELECT 1 FROM pgmate.matches m WHERE m.name = learning_match.name AND m.status <> 'running'
                   AND m.owner = pgmate.acting_role()) THEN
      CALL pgmate.arena(candidate, opponent, games,
                        jsonb_build_object('name', name, 'seed', seed, 'openings', openings, 'max_plies', max_plies,
                                           'parallel', least(parallel, games)) || coalesce(extra, '{}'));
    END IF;
    SELECT m.id INTO STRICT own_match FROM pgmate.matches m
    WHERE m.name = learning_match.name AND m.owner = pgmate.acting_role();
    SELECT jsonb_strip_nulls(jsonb_build_object('match', r.name, 'match_id', r.match_id, 'opponent', opponent,
                                                'games', r.games, 'wins', r.wins,
                                                'draws', r.draws, 'losses', r.losses, 'score', r.score, 'elo', r.elo,
                                                'elo_lower', r.elo_lower, 'elo_upper', r.elo_upper,
                                                'sprt', r.sprt_verdict))
      INTO result FROM pgmate.match_results r WHERE r.match_id = own_match;
  END
  $$;

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
    last_log record;
    arena_round bool;
    arena jsonb;
    m jsonb;
    veto_scores float8[];
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
      s := pgmate.learning_settings(options);
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
        train_options := jsonb_build_object(
          'batch', s->'batch', 'optimizer', 'adamw', 'lr', r.lr, 'schedule', 'constant',
          'log_every', least((s->>'steps')::int, 50), 'checkpoint_every', least((s->>'steps')::int, 50),
          'seed', (s->>'seed')::bigint % 2147483647 + k, 'name', run || ' ' || k);
        IF (s->>'kl_weight')::float8 > 0 THEN
          train_options := train_options || jsonb_build_object('kl_weight', s->'kl_weight', 'kl_reference', r.start_network);
        END IF;
        IF s ? 'holdout' THEN
          train_options := train_options || jsonb_build_object('holdout', s->'holdout');
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
          train_options := train_options || jsonb_build_object('warmup_steps', least((s->>'steps')::int, 20));
        END IF;
        RAISE NOTICE 'learn: run "%" iteration %: training network % for % steps', run, k, r.current_network, s->'steps';
        CALL pgmate.train(r.current_network, data_query, (s->>'steps')::bigint, train_options, candidate);
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
      veto_scores := '{}';
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
            veto_scores := veto_scores || (m->>'score')::float8;
          END IF;
          IF r.start_network <> r.best_network THEN
            CALL pgmate.learning_match(label || ':start', net_player || jsonb_build_object('network', candidate),
                                       net_player || jsonb_build_object('network', r.start_network),
                                       (s->>'veto_games')::int, (s->>'seed')::bigint + k, (s->>'max_plies')::int,
                                       (s->>'parallel')::int, s->>'openings', NULL, m);
            arena := arena || jsonb_build_object('start', m);
            veto_scores := veto_scores || (m->>'score')::float8;
          END IF;
        END IF;
        IF (s->>'sanity_games')::int > 0 THEN
          CALL pgmate.learning_match(label || ':random', net_player || jsonb_build_object('network', candidate),
                                     '"random"', (s->>'sanity_games')::int, (s->>'seed')::bigint + k,
                                     (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('random', m);
          CALL pgmate.learning_match(label || ':mcts', net_player || jsonb_build_object('network', candidate),
                                     jsonb_build_object('type', 'mcts', 'simulations', (s->>'arena_simulations')::int), (s->>'sanity_games')::int,
                                     (s->>'seed')::bigint + k, (s->>'max_plies')::int, (s->>'parallel')::int, s->>'openings', NULL, m);
          arena := arena || jsonb_build_object('mcts', m);
        END IF;
        -- With an SPRT only its accepted H1 promotes (the score threshold stands aside); the
        -- veto threshold applies either way.
        decision := pgmate.learning_decision((arena->'best'->>'score')::float8, veto_scores,
                                             CASE WHEN promotion_sprt IS NULL THEN (s->>'promotion_threshold')::float8
                                                  WHEN arena->'best'->>'sprt' = 'H1' THEN 0
                                                  ELSE 'Infinity'::float8 END,
                                             (s->>'veto_threshold')::float8);
        IF promotion_sprt IS NULL THEN
          reason := format('score %s against the best network (promotion at %s, veto below %s)',
                           round((arena->'best'->>'score')::numeric, 3), s->>'promotion_threshold', s->>'veto_threshold');
        ELSE
          reason := format('score %s against the best network over %s games, SPRT [%s, %s]: %s (veto below %s)',
                           round((arena->'best'->>'score')::numeric, 3), arena->'best'->>'games', s->>'promotion_elo0',
                           s->>'promotion_elo1', CASE arena->'best'->>'sprt' WHEN 'H1' THEN 'H1 accepted'
                                                   WHEN 'H0' THEN 'H0 accepted' ELSE 'undecided' END,
                           s->>'veto_threshold');
        END IF;
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

CREATE OR REPLACE VIEW pgmate.learning_log AS
  SELECT r.name AS run, i.iteration, i.decision, i.best_network, i.candidate, i.games, i.positions,
         i.window_positions, i.pretrain_positions,
         round(i.policy_loss::numeric, 4) AS policy_loss, round(i.value_loss::numeric, 4) AS value_loss,
         round(i.kl::numeric, 4) AS kl, round(i.holdout_top1::numeric, 4) AS holdout_top1,
         round(i.promotion_score::numeric, 3) AS score_vs_best,
         round(i.promotion_elo::numeric, 1) AS elo, round(i.promotion_elo_lower::numeric, 1) AS elo_lower,
         round(i.promotion_elo_upper::numeric, 1) AS elo_upper,
         round((i.arena->'random'->>'score')::numeric, 3) AS score_vs_random,
         round((i.arena->'mcts'->>'score')::numeric, 3) AS score_vs_mcts,
         i.veto_level, i.pretrain_mix, i.lr, i.excluded_games,
         round((coalesce(i.selfplay_seconds, 0) + coalesce(i.training_seconds, 0)
                + coalesce(i.arena_seconds, 0))::numeric, 1) AS seconds,
         i.reason, r.owner
  FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id;

-- The run a name means to the caller: its own run of that name, else the one run of that
-- name (22023 when there is none, or several of other roles).
CREATE FUNCTION pgmate.learning_run_id(name text) RETURNS bigint
  LANGUAGE plpgsql STABLE
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
        USING ERRCODE = 'invalid_parameter_value', HINT = 'SET ROLE to the owner of the run you mean.';
    END IF;
    RETURN found;
  END
  $$;
COMMENT ON FUNCTION pgmate.learning_run_id(text) IS
  'the learning run a name means: the caller''s own run of that name, else the only run of that name (NULL: none)';

-- Whether a session is working on each run now (a run whose call failed or was cancelled,
-- or whose session ended, is idle at once).
CREATE VIEW pgmate.learning_status AS
  SELECT r.name AS run, r.owner, r.iterations, r.best_network,
         CASE WHEN h.working THEN 'running' ELSE 'idle' END AS status,
         CASE WHEN h.working THEN r.holder_pid END AS pid,
         r.updated_at
  FROM pgmate.learning_runs r
  CROSS JOIN LATERAL (SELECT pgmate.session_is_working(r.holder_pid, r.holder_backend_start, r.holder_since)
                        AS working) h;
COMMENT ON VIEW pgmate.learning_status IS
  'each learning run: owner, finished iterations, best network, and whether a session works on it now (its pid)';
-- ============================================================ end of owners and leases

-- ============================================================ the lock of imports that skip copies
-- Imports that skip copies of stored games check and insert one batch at a time, so that
-- two batches in flight cannot both keep a copy. They serialize on this table's lock, which
-- only pgmate.import_duplicates_lock takes: unlike an advisory lock, a role that may not
-- import cannot hold it and stall the imports of others.
CREATE TABLE pgmate.import_lock () WITH (autovacuum_enabled = false);
COMMENT ON TABLE pgmate.import_lock IS 'the lock of imports that skip copies (never written)';
CREATE FUNCTION pgmate.import_duplicates_lock() RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
  BEGIN
    LOCK TABLE pgmate.import_lock IN EXCLUSIVE MODE;
  END
  $$;
REVOKE ALL ON FUNCTION pgmate.import_duplicates_lock() FROM PUBLIC;
COMMENT ON FUNCTION pgmate.import_duplicates_lock() IS
  'takes, until the end of the transaction, the lock that imports skipping copies of stored games serialize on';

-- ============================================================ claims of client sessions
-- What a client works on through many statements (a pgmate selfplay run, a pgmate arena
-- match), claimed for its session: a second client of the same name stops at once. Claims
-- are each login role's own (session_user), so no role can hold a name another role uses;
-- an advisory lock could be taken first by anyone.
CREATE TABLE pgmate.client_claims (
  owner                name NOT NULL,
  name                 text NOT NULL,
  holder_pid           int NOT NULL,
  holder_backend_start timestamptz NOT NULL,
  PRIMARY KEY (owner, name)
);
COMMENT ON TABLE pgmate.client_claims IS 'names claimed by client sessions (pgmate selfplay runs, pgmate arena matches)';

-- Claims `name` for this session, for as long as it lasts; false while another live session
-- of the same login role holds it.
CREATE FUNCTION pgmate.client_claim(name text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    me_start timestamptz := (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid());
  BEGIN
    INSERT INTO pgmate.client_claims AS c (owner, name, holder_pid, holder_backend_start)
    VALUES (session_user, client_claim.name, pg_backend_pid(), me_start)
    ON CONFLICT (owner, name) DO UPDATE SET holder_pid = excluded.holder_pid,
                                            holder_backend_start = excluded.holder_backend_start
      WHERE c.holder_pid = excluded.holder_pid AND c.holder_backend_start = excluded.holder_backend_start
         OR NOT pgmate.session_is_working(c.holder_pid, c.holder_backend_start, NULL);
    RETURN FOUND;
  END
  $$;
COMMENT ON FUNCTION pgmate.client_claim(text) IS
  'claims a name for this session (a client''s run or match); false while another session of the same login role holds it';
