-- CALL pgmate.train: a copy of a network trained on the worker from the rows of a query,
-- with its run, checkpoints and log as rows.
SELECT pgmate.wait_for_worker();
SELECT coalesce(max(id), 0) AS before FROM pgmate.games \gset
SELECT pgmate.import_pgn($$
[Result "1-0"]
1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 1-0

[Result "0-1"]
1. d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 0-1

[Result "1/2-1/2"]
1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 1/2-1/2

[Result "1-0"]
1. c4 e5 2. Nc3 Nf6 3. Nf3 Nc6 4. g3 d5 1-0

[Result "0-1"]
1. e4 e6 2. d4 d5 3. Nc3 Bb4 4. e5 c5 0-1

[Result "0-1"]
1. f3 e5 2. g4 Qh4# 0-1

[Result "1/2-1/2"]
1. Nf3 d5 2. g3 Nf6 3. Bg2 e6 4. O-O Be7 1/2-1/2

[Result "1-0"]
1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0
$$) AS imported;
-- held out by game, never by position: every fourth game
CREATE TABLE train_rows AS
  SELECT t.*, dense_rank() OVER (ORDER BY game_id) % 4 = 0 AS held_out, 1::real AS weight
  FROM pgmate.game_targets t WHERE game_id > :before
  ORDER BY game_id, ply;  -- stored in game order: "row 1" in the errors below is the same everywhere
SELECT held_out, count(*) FROM train_rows GROUP BY held_out ORDER BY held_out;
SELECT pgmate.init_network('to train', '{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}',
                           seed => 11) AS net \gset

-- bad input: nothing is stored
CALL pgmate.train(:net, 'SELECT board, played FROM train_rows', 10);
CALL pgmate.train(:net, 'SELECT board, played, z::text AS z FROM train_rows', 10);
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows WHERE false', 10);
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 10, '{"speed": 2}');
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 10, '{"lr": 50}');
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 10, '{"log_every": 3, "checkpoint_every": 5}');
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 0);
CALL pgmate.train(:net, NULL, 10);
CALL pgmate.train(-1, 'SELECT board, played, z FROM train_rows', 10);
CALL pgmate.train(:net, 'SELECT board, ''e2e5''::move AS played, z FROM train_rows', 10);
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 10, '{"holdout": "SELECT 1 AS board"}');
-- a target move given twice, and values that overflow real (the targets' type): the row named
CALL pgmate.train(:net, $q$SELECT 'startpos'::board AS board, '{e2e4,e2e4}'::move[] AS moves, '{0.5,0.5}'::real[] AS policy,
                               0 AS z FROM generate_series(1, 8)$q$, 2, '{"batch": 4}');
CALL pgmate.train(:net, $q$SELECT 'startpos'::board AS board, 'e2e4'::move AS played, ARRAY[1e300::float8, 0, 0] AS wdl$q$, 2);
-- more rows than pgmate.train_max_rows allows in memory: 54000, refused while reading, and
-- held-out rows count too
SET pgmate.train_max_rows = 10;
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 10);
\echo :LAST_ERROR_SQLSTATE
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows LIMIT 8', 10,
                  '{"holdout": "SELECT board, played, z FROM train_rows"}');
\echo :LAST_ERROR_SQLSTATE
RESET pgmate.train_max_rows;
SELECT count(*) AS runs FROM pgmate.training_runs;

-- a run: 40 steps, a log row every 10 (and one before the first step), held-out rows measured
SET client_min_messages = warning;
CALL pgmate.train(:net, 'SELECT board, history, repetitions, played, z, weight FROM train_rows WHERE NOT held_out', 40,
                  '{"batch": 16, "log_every": 10, "checkpoint_every": 20, "optimizer": "adamw", "lr": 0.003,
                    "holdout": "SELECT board, history, repetitions, played, z FROM train_rows WHERE held_out",
                    "name": "trained"}') \gset
RESET client_min_messages;
SELECT :new_network AS trained, parent_id = :net AS child_of_net, name, training->'steps' AS steps,
       training->'samples' AS samples, training->'settings'->'batch' AS batch,
       training->>'data' LIKE '%NOT held_out' AS data_query
  FROM pgmate.networks WHERE id = :new_network \gset
SELECT :'child_of_net' AS child_of_net, :'name' AS name, :'steps' AS steps, :'samples' AS samples, :'batch' AS batch,
       :'data_query' AS data_query;
SELECT status, steps_done, new_network = :trained AS new_network, samples, length(data_sha256) AS sha_length
  FROM pgmate.training_runs;
-- the log: a row per interval, held-out measures on every row, losses that went down
SELECT step, samples, policy_loss IS NULL AS before, holdout_positions, lr IS NOT NULL OR step = 0 AS lr
  FROM pgmate.training_log WHERE network = :trained ORDER BY step;
SELECT (SELECT policy_loss FROM pgmate.training_log WHERE network = :trained AND step = 40) <
       (SELECT policy_loss FROM pgmate.training_log WHERE network = :trained AND step = 10) AS policy_loss_fell,
       (SELECT holdout_policy_loss FROM pgmate.training_log WHERE network = :trained AND step = 40) <
       (SELECT holdout_policy_loss FROM pgmate.training_log WHERE network = :trained AND step = 0) AS holdout_loss_fell;
-- the final checkpoint is kept (weights, optimizer, step: safetensors, never code)
SELECT step, substring(state from 9 for 1) = '{' AS safetensors_header FROM pgmate.training_checkpoints;
-- the trained network plays and is measured like any other
SELECT positions, top1 > 0 AS some_correct
  FROM pgmate.network_accuracy(:trained, 'SELECT board, history, played, z FROM train_rows WHERE NOT held_out');
SELECT pgmate.training_chart(:trained) LIKE '<svg%</svg>' || chr(10) AS chart,
       pgmate.training_chart(:trained) LIKE '%held-out top-1%' AS legend,
       pgmate.training_chart(:net) IS NOT NULL AS parent_chart,
       pgmate.training_chart(123456789) IS NULL AS no_chart;

-- pause_after: a call that stops at a checkpoint; the same call goes on from there, and
-- the result is the same network, bit for bit, as the uninterrupted run's
SET client_min_messages = warning;
CALL pgmate.train(:net, 'SELECT board, history, repetitions, played, z, weight FROM train_rows WHERE NOT held_out', 40,
                  '{"batch": 16, "log_every": 10, "checkpoint_every": 20, "optimizer": "adamw", "lr": 0.003,
                    "holdout": "SELECT board, history, repetitions, played, z FROM train_rows WHERE held_out",
                    "name": "paused", "pause_after": 20}');
SELECT id AS paused_run FROM pgmate.training_runs ORDER BY id DESC LIMIT 1 \gset
SELECT status, steps_done, new_network IS NULL AS no_network_yet FROM pgmate.training_runs WHERE id = :paused_run;
CALL pgmate.train(:net, 'SELECT board, history, repetitions, played, z, weight FROM train_rows WHERE NOT held_out', 40,
                  '{"batch": 16, "log_every": 10, "checkpoint_every": 20, "optimizer": "adamw", "lr": 0.003,
                    "holdout": "SELECT board, history, repetitions, played, z FROM train_rows WHERE held_out",
                    "name": "resumed"}') \gset
RESET client_min_messages;
SELECT count(*) AS runs, max(id) = :paused_run AS same_run FROM pgmate.training_runs;
SELECT a.weights_sha256 = b.weights_sha256 AS same_weights, b.name
  FROM pgmate.networks a, pgmate.networks b WHERE a.id = :trained AND b.id = :new_network;
SELECT count(*) AS log_rows, bool_and(a.policy_loss IS NOT DISTINCT FROM b.policy_loss) AS same_losses,
       bool_and(a.holdout_top1 = b.holdout_top1) AS same_holdout
  FROM pgmate.training_log a JOIN pgmate.training_log b USING (step)
  WHERE a.network = :trained AND b.run = :paused_run;

-- optimizer_from: a training that goes on from the optimizer of an earlier run (AdamW's
-- moments and step count in that run's last checkpoint), as the learning loop's next
-- iteration does: here on the network the first run made, against the same with a new
-- optimizer
SELECT id AS first_run FROM pgmate.training_runs WHERE new_network = :trained \gset
SELECT format('{"batch": 16, "log_every": 10, "optimizer": "adamw", "lr": 0.003, "dropout": 0, "name": "carried", "optimizer_from": %s}',
              :first_run) AS carried_options \gset
CALL pgmate.train(:trained, 'SELECT board, played, z FROM train_rows', 10, '{"optimizer_from": 99999999}');
SELECT count(*) AS runs FROM pgmate.training_runs;
SET client_min_messages = warning;
CALL pgmate.train(:trained, 'SELECT board, played, z FROM train_rows WHERE NOT held_out', 10, :'carried_options') \gset
SELECT :new_network AS carried \gset
CALL pgmate.train(:trained, 'SELECT board, played, z FROM train_rows WHERE NOT held_out', 10,
                  '{"batch": 16, "log_every": 10, "optimizer": "adamw", "lr": 0.003, "dropout": 0, "name": "cold"}') \gset
RESET client_min_messages;
SELECT (c.training->'settings'->>'optimizer_from')::bigint = :first_run AS carried_from_first,
       f.training->'settings' ? 'optimizer_from' AS cold_has_it,
       c.weights_sha256 <> f.weights_sha256 AS optimizer_mattered
  FROM pgmate.networks c, pgmate.networks f WHERE c.id = :carried AND f.id = :new_network;

-- a loss that is no longer finite stops the run with a clear error; its last good
-- checkpoint stays (plain SGD at lr 10 with heavy decay diverges within a few steps)
SET client_min_messages = error;
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 50,
                  '{"batch": 16, "log_every": 1, "checkpoint_every": 1, "optimizer": "sgd", "momentum": 0,
                    "lr": 10, "weight_decay": 1, "dropout": 0}');
RESET client_min_messages;
SELECT status, error LIKE '%not finite%' AS not_finite, new_network IS NULL AS no_network,
       (SELECT array_agg(c.step) = ARRAY[r.steps_done] FROM pgmate.training_checkpoints c WHERE c.run_id = r.id)
         AS last_good_checkpoint,
       steps_done < 50 AS stopped_early
  FROM pgmate.training_runs r ORDER BY id DESC LIMIT 1;

-- of the holdout query only the first holdout_limit rows are read (one fetch): its division
-- by zero thousands of rows on is never reached, nor the limit on rows held
SET pgmate.train_max_rows = 2000;
SET client_min_messages = warning;
CALL pgmate.train(:net, 'SELECT board, played, z FROM train_rows', 1,
                  '{"batch": 4, "log_every": 1, "name": "holdout limited", "holdout_limit": 3,
                    "holdout": "SELECT board, played, z FROM train_rows, generate_series(1, 100000) g WHERE 1 / (g - 5000) IS NOT NULL"}') \gset
RESET client_min_messages;
RESET pgmate.train_max_rows;
SELECT step, holdout_positions FROM pgmate.training_log WHERE network = :new_network ORDER BY step;

-- log rows planted with steps two neighbouring large doubles apart: the chart is still a
-- small SVG with round ticks (a loop stepping from one to the other used to never end)
INSERT INTO pgmate.training_runs (network_id, data, steps, settings, samples, data_sha256)
  VALUES (:net, 'planted', 1, '{}', 1, 'x') RETURNING id AS planted_run \gset
INSERT INTO pgmate.training_progress (run_id, step, samples, policy_loss, accuracy)
  VALUES (:planted_run, 100000000000000000, 0, 1, 0.5), (:planted_run, 100000000000000016, 0, 1, 0.5);
SET statement_timeout = '30s';
SELECT chart LIKE '<svg%</svg>' || chr(10) AS chart, length(chart) < 20000 AS small,
       chart LIKE '%>100000000000000000<%' AS round_ticks
  FROM pgmate.training_chart(:net) chart;
RESET statement_timeout;

-- clean up: the next suites count runs and networks of their own
DROP TABLE train_rows;
TRUNCATE pgmate.training_runs, pgmate.training_checkpoints, pgmate.training_progress, pgmate.learning_iterations;
UPDATE pgmate.networks SET parent_id = NULL WHERE parent_id IS NOT NULL;
DELETE FROM pgmate.networks WHERE name IN ('to train', 'trained', 'resumed', 'carried', 'cold', 'holdout limited');
DELETE FROM pgmate.games WHERE id > :before;
