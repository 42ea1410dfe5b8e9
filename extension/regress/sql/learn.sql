-- CALL pgmate.learn: the learning loop with every step as rows. Short games (max_plies 10)
-- end as draws, so every arena score is 0.5 and the decisions follow from the thresholds
-- alone: the paths of the loop are tested here, its strength in bench/learn.
SELECT pgmate.wait_for_worker();
SELECT coalesce(max(id), 0) AS before FROM pgmate.games \gset
-- the suites share one database: this one leaves it as it found it (see the end)
SELECT g.last_value AS games_seq, g.is_called AS games_called, n.last_value AS networks_seq,
       n.is_called AS networks_called, m.last_value AS matches_seq, m.is_called AS matches_called,
       t.last_value AS runs_seq, t.is_called AS runs_called
FROM pgmate.games_id_seq g, pgmate.networks_id_seq n, pgmate.matches_id_seq m, pgmate.training_runs_id_seq t \gset
SELECT pgmate.import_pgn($$
[Result "1-0"]
1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 1-0

[Result "0-1"]
1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 0-1

[Result "1/2-1/2"]
1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 1/2-1/2
$$) AS imported;
CREATE TABLE learn_pretrain AS SELECT * FROM pgmate.game_targets WHERE game_id > :before;
SELECT pgmate.init_network('learn start', '{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}',
                           seed => 5) AS net \gset

-- the pure parts: the gate and escalation levels. By default the likelihood of
-- superiority over the best network decides (promotion at 0.95, veto below 0.01 against
-- any opponent); a score threshold or an SPRT when the run asks for one
SELECT rule, best, vetoes, pgmate.learning_gate(best, vetoes, settings)
FROM (VALUES ('{"promotion_los": 0.95, "veto_los": 0.01}'::jsonb),
             ('{"promotion_los": 0.95, "veto_los": 0.01, "promotion_threshold": 0.55, "veto_threshold": 0.35}'),
             ('{"promotion_los": 0.95, "veto_los": 0.01, "promotion_elo0": 0, "promotion_elo1": 30}')) AS r (settings),
     LATERAL (SELECT CASE WHEN settings ? 'promotion_elo1' THEN 'sprt' WHEN settings ? 'promotion_threshold' THEN 'score'
                          ELSE 'los' END AS rule) n,
     (VALUES ('{"score": 0.6, "los": 0.97}'::jsonb, '{}'::jsonb[]),
             ('{"score": 0.6, "los": 0.93}', '{}'),
             ('{"score": 0.55, "los": 0.8, "sprt": "H1"}', '{}'),
             ('{"score": 0.6, "los": 0.97}', ARRAY['{"score": 0.3, "los": 0.005}'::jsonb]),
             ('{"score": 0.6, "los": 0.97}', ARRAY['{"score": 0.34, "los": 0.2}'::jsonb]),
             ('{"score": 0.3, "los": 0.02}', '{}')) AS c (best, vetoes)
ORDER BY rule, best::text, vetoes::text;
SELECT level, e.* FROM generate_series(1, 4) level, pgmate.learning_escalation(level, 0.5, 0.001, 0) e;
SELECT * FROM pgmate.learning_escalation(4, 0.9, 0.001, 0.3);
-- defaults that follow the start: fine-tuning a given network takes smaller steps and
-- holds to its policy; a new network learns at full rate; given values stay
SELECT given, s->'lr' AS lr, s->'kl_weight' AS kl_weight
FROM (VALUES ('{"openings": "startpos"}'::jsonb), ('{"network": 1, "openings": "startpos"}'),
             ('{"network": 1, "openings": "startpos", "lr": 0.002, "kl_weight": 0.5}')) AS c (given),
     pgmate.learning_settings(given) s;
-- on a CUDA worker a new run trains 1,024 positions a step at sqrt(8) times the default
-- rate, unless the caller gave either; a CPU worker keeps 128
SELECT device, given, d->'batch' AS batch, d->'lr' AS lr
FROM (VALUES ('cpu', '{}'::jsonb), ('cuda:0', '{}'), ('cuda:0', '{"network": 1}'), ('cuda:0', '{"batch": 256}'),
             ('cuda:0', '{"lr": 0.002}')) AS c (device, given),
     pgmate.learning_device_defaults(pgmate.learning_settings(given || '{"openings": "startpos"}'), given, device) d;

-- bad calls: clear errors, nothing stored
CALL pgmate.learn('bad', 1, '{"gamez": 3}');
CALL pgmate.learn('bad', 1, '{"games": 3.5}');
CALL pgmate.learn('bad', 1, '{"games": "many"}');
CALL pgmate.learn('bad', 1, '{"search": "mcts"}');
CALL pgmate.learn('bad', 1, '{"optimizer_state": "warm"}');
CALL pgmate.learn('bad', 1, '{"promotion_elo0": 10, "promotion_elo1": 5}');
CALL pgmate.learn('bad', 1, '{"arena_games": 3}');
CALL pgmate.learn('bad', 1, '{"veto_threshold": 0.6, "promotion_threshold": 0.55}');
CALL pgmate.learn('bad', 1, '{"promotion_los": 0.4}');
CALL pgmate.learn('bad', 1, '{"veto_los": 0.5}');
CALL pgmate.learn('bad', 1, '{"kl_reference": "current"}');
CALL pgmate.learn('bad', 1, '{"pretrain_mix": 0.5}');
CALL pgmate.learn('bad', 1, '[1, 2]');
CALL pgmate.learn('bad', 1, '{"network": 999999, "openings": "startpos"}');
BEGIN;  -- a database without the ECO lines
DELETE FROM pgmate.openings;
CALL pgmate.learn('bad', 1, '{"openings": "eco"}');
ROLLBACK;
CALL pgmate.learn(NULL, 1);
CALL pgmate.learn('bad', -1);
BEGIN;
SET LOCAL client_min_messages = warning;
CALL pgmate.learn('in a transaction', 1, '{"network": 1, "openings": "startpos"}');
ROLLBACK;
SELECT count(*) AS runs FROM pgmate.learning_runs;

-- a run: two iterations, each candidate promoted (0.5 reaches a promotion threshold of 0.5)
\set options '{"network": ' :net ', "games": 4, "simulations": 8, "parallel": 4, "max_plies": 10, "steps": 4, "batch": 16, "arena_games": 2, "arena_interval": 1, "sanity_interval": 1, "veto_games": 2, "sanity_games": 2, "arena_simulations": 4, "promotion_threshold": 0.5, "veto_threshold": 0.35, "search": "gumbel", "full_search_fraction": 0.5, "value_target": "mix", "pretrain_data": "SELECT * FROM learn_pretrain", "seed": 7, "openings": "startpos"}'
SELECT :'options' AS promoting_options \gset
SET client_min_messages = error;
CALL pgmate.learn('promoting', 2, :'options');
RESET client_min_messages;
SELECT name, iterations, veto_level, (SELECT st.status FROM pgmate.learning_status st WHERE st.run = name) AS status, start_network = :net AS from_net, best_network <> :net AS moved_on,
       best_network = current_network AS best_is_current, settings->>'search' AS search, settings->'kl_weight' AS kl_weight
FROM pgmate.learning_runs WHERE name = 'promoting';
SELECT iteration, decision, games, positions > 0 AS played, window_positions > 0 AS window,
       pretrain_positions > 0 AS mixed, policy_loss > 0 AS trained, kl >= 0 AS kl, arena ? 'best' AS best,
       arena ? 'older' AS older, arena ? 'start' AS start, arena ? 'random' AS random, arena ? 'mcts' AS mcts,
       promotion_score, i.veto_level, i.pretrain_mix, i.lr
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
WHERE r.name = 'promoting' ORDER BY iteration;
-- the candidate of iteration 2 was trained from the best of iteration 1, against the start
SELECT i.iteration, n.parent_id = i.best_network AS from_best, (n.training->'settings'->>'kl_reference')::bigint = :net AS kl_to_start
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
JOIN pgmate.networks n ON n.id = i.candidate WHERE r.name = 'promoting' ORDER BY i.iteration;
-- the games, labelled by run and iteration, with cheap searches flagged
SELECT g.selfplay->>'run' ~ '^learn:[0-9]+:[12]$' AS labelled, count(DISTINCT g.id) AS games,
       bool_or(p.full_search) AS some_full, bool_or(NOT p.full_search) AS some_cheap
FROM pgmate.games g JOIN pgmate.selfplay_positions p ON p.game_id = g.id
WHERE g.source = 'selfplay' AND g.selfplay->>'run' LIKE 'learn:%'
GROUP BY 1;
-- the matches of the arena rounds, whole
SELECT regexp_replace(name, '^learn:[0-9]+:', '') AS match, games, status FROM pgmate.matches
WHERE name LIKE 'learn:%' ORDER BY id;
-- the training rows of iteration 1: self-play policies (cheap searches left out) and
-- pretraining moves, in the share asked for
SELECT count(*) FILTER (WHERE played IS NULL) AS selfplay, count(*) FILTER (WHERE played IS NOT NULL) AS pretraining,
       bool_and(abs(wdl[1] + wdl[2] + wdl[3] - 1) < 1e-5) AS wdl_sums_to_1
FROM pgmate.learning_data((SELECT id FROM pgmate.learning_runs WHERE name = 'promoting'), 1);

-- an existing run keeps its settings
CALL pgmate.learn('promoting', 1, '{"games": 5}');
DO $$
BEGIN
  CALL pgmate.learn('promoting', 1, '{"network": 99999999}');
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE '%', regexp_replace(SQLERRM, 'network [0-9]+,', 'network N,');
END $$;

-- a call that stops after self-play leaves the iteration in progress; the next goes on
-- with the same games and finishes it
SET client_min_messages = error;
CALL pgmate.learn('promoting', 1, '{"stop_after": "selfplay"}');
RESET client_min_messages;
SELECT iterations FROM pgmate.learning_runs WHERE name = 'promoting';
SELECT count(*) AS games_of_iteration_3 FROM pgmate.games g JOIN pgmate.learning_runs r ON r.name = 'promoting'
WHERE g.selfplay->>'run' = 'learn:' || r.id || ':3';
SET client_min_messages = error;
CALL pgmate.learn('promoting', 1);
RESET client_min_messages;
SELECT iterations FROM pgmate.learning_runs WHERE name = 'promoting';
SELECT count(*) AS games_of_iteration_3, count(DISTINCT g.selfplay->>'index') AS indices
FROM pgmate.games g JOIN pgmate.learning_runs r ON r.name = 'promoting'
WHERE g.selfplay->>'run' = 'learn:' || r.id || ':3';
SELECT count(*) AS training_runs_of_iteration_3 FROM pgmate.training_runs t JOIN pgmate.learning_runs r ON r.name = 'promoting'
WHERE t.data = format('SELECT * FROM pgmate.learning_data(%s, 3)', r.id);

-- vetoes escalate: every candidate scores 0.5, below a veto threshold of 0.51
\set options '{"network": ' :net ', "games": 4, "simulations": 8, "parallel": 4, "max_plies": 10, "steps": 4, "batch": 16, "arena_games": 2, "arena_interval": 1, "sanity_interval": 1, "veto_games": 0, "sanity_games": 0, "arena_simulations": 4, "promotion_threshold": 0.9, "veto_threshold": 0.51, "search": "puct", "pretrain_data": "SELECT * FROM learn_pretrain", "pretrain_mix": 0.3, "seed": 8, "openings": "startpos"}'
SET client_min_messages = error;
CALL pgmate.learn('vetoing', 4, :'options');
RESET client_min_messages;
SELECT iteration, decision, i.veto_level, i.pretrain_mix, i.lr, excluded_games, i.best_network = :net AS best_kept
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
WHERE r.name = 'vetoing' ORDER BY iteration;
SELECT veto_level, round(pretrain_mix::numeric, 2) AS pretrain_mix, lr, current_share, best_network = :net AS best_kept,
       current_network = :net AS restored
FROM pgmate.learning_runs WHERE name = 'vetoing';
-- excluded games stay, out of the window: 25% after the first veto, 50% after the fourth
SELECT e.iteration, count(*) AS excluded FROM pgmate.learning_exclusions e
JOIN pgmate.learning_runs r ON r.id = e.run_id WHERE r.name = 'vetoing' GROUP BY e.iteration ORDER BY 1;
SELECT count(*) AS games_kept FROM pgmate.games g JOIN pgmate.learning_runs r ON r.name = 'vetoing'
WHERE g.selfplay->>'run' LIKE 'learn:' || r.id || ':%';
-- level 3 on: 30% of the games (here 1 of 4) with the current network, here the restored best
SELECT count(*) FILTER (WHERE (g.selfplay->>'index')::int >= 3) AS by_current
FROM pgmate.games g JOIN pgmate.learning_runs r ON r.name = 'vetoing'
WHERE g.selfplay->>'run' = 'learn:' || r.id || ':4';

-- the optimizer: each training continues the one that made the current network (after a
-- promotion or a keep), a veto starts afresh, and a run with optimizer_state fresh never
-- carries it
SET client_min_messages = error;
CALL pgmate.learn('fresh', 2, jsonb_set(:'promoting_options'::jsonb, '{optimizer_state}', '"fresh"'));
RESET client_min_messages;
SELECT r.name, i.iteration, p.decision AS decision_before, r.settings->>'optimizer_state' AS optimizer_state,
       (t.settings->>'optimizer_from')::bigint = p.training_run AS from_the_training_before,
       t.settings ? 'optimizer_from' AS carried
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
JOIN pgmate.training_runs t ON t.id = i.training_run
LEFT JOIN pgmate.learning_iterations p ON p.run_id = i.run_id AND p.iteration = i.iteration - 1
ORDER BY r.name, i.iteration;

-- promotion by SPRT: the same drawn games that reach the score threshold of 0.5 above
-- promote nothing here, since no H1 is accepted; the verdict is kept with the match
SET client_min_messages = error;
CALL pgmate.learn('sprt', 1, jsonb_set(:'promoting_options'::jsonb, '{promotion_elo1}', '10'));
RESET client_min_messages;
SELECT i.decision, i.arena->'best'->>'sprt' AS verdict, i.arena->'best'->>'games' AS games,
       i.reason LIKE '%SPRT [0, 10]: undecided%' AS reason, m.options->>'sprt_elo1' AS match_elo1
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
JOIN pgmate.matches m ON m.name = i.arena->'best'->>'match' WHERE r.name = 'sprt';

-- a fresh optimizer warms up (iteration 1 of a run, and every iteration with
-- optimizer_state fresh); a carried one goes on at the full rate
SELECT r.name, i.iteration, (t.settings->>'warmup_steps')::int AS warmup_steps, t.settings ? 'optimizer_from' AS carried
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
JOIN pgmate.training_runs t ON t.id = i.training_run
WHERE r.name IN ('promoting', 'fresh') ORDER BY r.name, i.iteration;

-- a promotion undoes escalation: a run left at level 3 (learning rate halved, more
-- pretraining, a share of self-play by the current network) promotes its candidate and is
-- at its settings again
SET client_min_messages = error;
CALL pgmate.learn('restored', 0, :'promoting_options');
RESET client_min_messages;
UPDATE pgmate.learning_runs SET veto_level = 3, lr = lr / 2, pretrain_mix = 0.7, current_share = 0.3
WHERE name = 'restored';
SET client_min_messages = error;
CALL pgmate.learn('restored', 1);
RESET client_min_messages;
SELECT i.decision, r.veto_level, r.lr = (r.settings->>'lr')::float8 AS lr_restored,
       r.pretrain_mix = (r.settings->>'pretrain_mix')::float8 AS mix_restored, r.current_share
FROM pgmate.learning_runs r JOIN pgmate.learning_iterations i ON i.run_id = r.id WHERE r.name = 'restored';

-- a veto excludes the newest games of the window the candidate trained on, not of the
-- whole run: 8 games of 10 plies, a window of 25 positions (3 games), 1 game excluded
SET client_min_messages = error;
CALL pgmate.learn('narrow', 1, jsonb_set(jsonb_set(:'options'::jsonb, '{games}', '8'), '{window}', '25'));
RESET client_min_messages;
SELECT i.decision, i.excluded_games,
       (SELECT count(DISTINCT w.game_id) FROM pgmate.learning_window(r.id, 1) w) AS window_games_now,
       (SELECT count(*) FROM pgmate.learning_games g WHERE g.run_id = r.id) AS games
FROM pgmate.learning_runs r JOIN pgmate.learning_iterations i ON i.run_id = r.id WHERE r.name = 'narrow';

-- the default gate: promotion by the likelihood of superiority over the best network (all
-- games drawn: LOS 0.5, kept); training steps from samples_per_position; the KL term held
-- to the best network; the sanity games every sanity_interval-th arena round; the held-out
-- rows measured before the first step only for the start network
\set defaults_options '{"network": ' :net ', "games": 4, "simulations": 8, "parallel": 4, "max_plies": 10, "batch": 16, "arena_games": 2, "arena_interval": 1, "sanity_games": 2, "sanity_interval": 2, "arena_simulations": 4, "samples_per_position": 2, "kl_reference": "best", "value_target": "q", "holdout": "SELECT * FROM learn_pretrain", "pretrain_data": "SELECT * FROM learn_pretrain", "seed": 9, "openings": "startpos"}'
SET client_min_messages = error;
CALL pgmate.learn('defaults', 2, :'defaults_options');
RESET client_min_messages;
SELECT r.settings ? 'steps' AS fixed_steps, r.settings ? 'promotion_threshold' AS score_rule,
       r.settings->'promotion_los' AS promotion_los, r.settings->'veto_los' AS veto_los, r.settings->'veto_games' AS veto_games
FROM pgmate.learning_runs r WHERE r.name = 'defaults';
SELECT i.iteration, i.decision, i.reason, i.arena ? 'random' AS sanity,
       t.steps = ceil(2.0 * (SELECT count(*) FROM pgmate.learning_games lg
                             JOIN pgmate.selfplay_positions p ON p.game_id = lg.game_id
                             WHERE lg.run_id = r.id AND lg.iteration = i.iteration AND p.full_search)
                      / (16 * (1 - 0.5))) AS steps_as_asked,
       (t.settings->>'kl_reference')::bigint = i.best_network AS kl_to_best,
       (SELECT p.holdout_top1 IS NOT NULL FROM pgmate.training_progress p WHERE p.run_id = t.id AND p.step = 0)
         AS measured_at_start,
       i.holdout_top1 IS NOT NULL AS measured_at_end
FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
JOIN pgmate.training_runs t ON t.id = i.training_run WHERE r.name = 'defaults' ORDER BY i.iteration;
-- every self-play position keeps the search's draw probability, and a q value target is
-- the search's own win/draw/loss (a q of 0 is no longer a certain draw)
SELECT count(*) > 0 AS positions, bool_and(t.d BETWEEN 0 AND 1) AS draw_probabilities,
       bool_and(abs(w.wdl[2] - t.d) < 1e-5 AND abs(w.wdl[1] - w.wdl[3] - t.q) < 1e-4
                AND abs(w.wdl[1] + w.wdl[2] + w.wdl[3] - 1) < 1e-4) AS search_wdl,
       bool_or(t.d < 0.99) AS not_all_draws
FROM pgmate.learning_runs r, pgmate.learning_window(r.id, 2) w
JOIN pgmate.training_targets t ON t.game_id = w.game_id AND t.ply = w.ply
WHERE r.name = 'defaults';

-- what a run looks like
SELECT run, iteration, decision, games, score_vs_best, veto_level FROM pgmate.learning_log ORDER BY run, iteration;
SELECT left(pgmate.learning_chart('promoting'), 4) AS svg, pgmate.learning_chart('promoting') LIKE '%</svg>%' AS whole,
       pgmate.learning_chart('promoting') LIKE '%learning run promoting: arena%' AS arena_chart;
SELECT pgmate.learning_chart('no such run');
SELECT pgmate.learning_chart('promoting', 10, 10);
SELECT name, kind, default_value FROM pgmate.learning_options WHERE name IN ('games', 'search', 'pretrain_mix') ORDER BY position;

-- leave the database as it was: later suites count games and name networks by id
DELETE FROM pgmate.learning_runs;
DELETE FROM pgmate.matches WHERE name LIKE 'learn:%';
DELETE FROM pgmate.games WHERE id > :before;
DELETE FROM pgmate.training_runs WHERE network_id >= :net;
DELETE FROM pgmate.networks WHERE id >= :net;
DROP TABLE learn_pretrain;
SELECT setval('pgmate.games_id_seq', :games_seq, :'games_called'::bool), setval('pgmate.networks_id_seq', :networks_seq, :'networks_called'::bool),
       setval('pgmate.matches_id_seq', :matches_seq, :'matches_called'::bool),
       setval('pgmate.training_runs_id_seq', :runs_seq, :'runs_called'::bool) \gset
-- and the worker forgets the networks of this suite, whose ids later suites use again
SELECT pgmate.kill_worker() AS killed \gset
SELECT pg_sleep(0.5) \gset
SELECT pgmate.wait_for_worker() AS back \gset
