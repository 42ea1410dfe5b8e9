#!/usr/bin/env bash
# The distillation recipe (make distill): the corpus of the pretraining recipe (make
# pretrain's database, made first when missing) labelled by Stockfish at a small fixed number
# of nodes on every core (pgmate analyse), and a network of the same configuration, steps and
# split as the pretrained one trained on the same positions, with Stockfish's WDL as the value
# target and its move as the policy target (pgmate.eval_targets) instead of the game's result
# and move. Then, for both networks, on the held-out opening lines (games never trained on,
# twin-free): top-1 against Stockfish's move and against the move played, WDL cross-entropy
# against Stockfish's WDL and against the game's result; and both on the ladder against
# Stockfish Skill Level 0 with the policy alone (1 simulation) and with 64 simulations.
#
#   scripts/distill.sh [PGMATE]
#
# Settings (environment): DISTILL_NODES (Stockfish nodes a position, 1000), DISTILL_JOBS
# (engines at once, every core), DISTILL_STEPS (2500), DISTILL_BATCH (256), DISTILL_LR
# (0.002), DISTILL_NETWORK (tiny), DISTILL_LADDER_GAMES (20 a rung; 0 skips the ladder),
# DISTILL_DB (pgmate_pretrain). Every step resumes: labels already stored are not made
# again, a finished training run is reused, ladder matches resume by name.
set -euo pipefail
pgmate=${1:-build/bin/pgmate}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
nodes=${DISTILL_NODES:-1000}
jobs=${DISTILL_JOBS:-$(nproc)}
steps=${DISTILL_STEPS:-2500}
batch=${DISTILL_BATCH:-256}
lr=${DISTILL_LR:-0.002}
network=${DISTILL_NETWORK:-tiny}
ladder_games=${DISTILL_LADDER_GAMES:-20}
db=${DISTILL_DB:-pgmate_pretrain}
started=$(date +%s)
say() { printf '\n\033[1m[%4ds] %s\033[0m\n' "$(( $(date +%s) - started ))" "$*"; }
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

stockfish=$(command -v stockfish || echo /usr/games/stockfish)
[ -x "$stockfish" ] || { echo "distill: Stockfish not found (make deps installs it)" >&2; exit 1; }
make -s all >/dev/null
make -s install >/dev/null
scripts/pg-server.sh start
eval "$(scripts/pg-server.sh env)"
if ! psql -X -q -A -t -d "$db" -c "SELECT 1 FROM pgmate.matches WHERE name = 'corpus' AND status = 'finished'" 2>/dev/null | grep -q 1; then
  say "no finished corpus in $db: the pretraining recipe first"
  PRETRAIN_DB=$db scripts/pretrain.sh "$pgmate"
fi
q "ALTER EXTENSION pgmate UPDATE"
q "SELECT pgmate.wait_for_worker('60 s')" >/dev/null

corpus_games="SELECT min(c.id) FROM pgmate.games c JOIN pgmate.matches m ON m.id = c.match_id
              WHERE m.name = 'corpus' GROUP BY c.game_hash"
say "labels: every position of the corpus by Stockfish at $nodes nodes, $jobs engines"
"$pgmate" analyse --db "dbname=$db" --where "id IN ($corpus_games)" --engine "uci:$stockfish" --nodes "$nodes" \
  --jobs "$jobs"
engine=$(q "SELECT engine FROM pgmate.position_evals WHERE limits = 'nodes=$nodes' AND engine LIKE 'Stockfish%' LIMIT 1")

# The pretraining recipe's rows and split (one game of each set of copies, the opening's book
# moves left out, every tenth ECO line held out), with Stockfish's labels beside them.
rows="FROM pgmate.eval_targets t JOIN pgmate.games g ON g.id = t.game_id
      WHERE g.id IN ($corpus_games) AND t.ply >= (g.arena->>'opening_plies')::int
        AND t.engine = '$engine' AND t.limits = 'nodes=$nodes'"
train="SELECT t.board, t.history, t.repetitions, t.best_move AS played, t.wdl $rows
         AND hashtext(g.arena->>'opening') % 10 <> 0"
holdout_sf="SELECT t.board, t.history, t.repetitions, t.best_move AS played, t.wdl $rows
              AND hashtext(g.arena->>'opening') % 10 = 0"
holdout_game="SELECT t.board, t.history, t.repetitions, t.played, t.z FROM pgmate.game_targets t
               JOIN pgmate.games g ON g.id = t.game_id
               WHERE g.id IN ($corpus_games) AND t.ply >= (g.arena->>'opening_plies')::int
                 AND hashtext(g.arena->>'opening') % 10 = 0"
q "SELECT (SELECT count(*) FROM ($train) t) || ' training positions, '
          || (SELECT count(*) FROM ($holdout_sf) h) || ' held-out positions, labelled by $engine at nodes=$nodes'"

# Runs are found by the name of the network they made (pgmate train --name).
run_of() { q "SELECT r.$2 FROM pgmate.training_runs r JOIN pgmate.networks n ON n.id = r.new_network
              WHERE n.name = '$1' AND r.status = 'finished' ORDER BY r.id LIMIT 1"; }
pretrained=$(run_of "pretrained $network" new_network)
[ -n "$pretrained" ] || { echo "distill: no finished 'pretrained $network' run in $db" >&2; exit 1; }
distilled=$(run_of "distilled $network nodes=$nodes" new_network)
if [ -z "$distilled" ]; then
  start=$(run_of "pretrained $network" network_id)
  # The same initial weights as the pretrained network: only the targets differ.
  say "train: network $start's initial weights ($network), $steps steps of $batch on Stockfish's labels"
  "$pgmate" train --db "dbname=$db" --network "$start" --data "$train" --holdout "$holdout_sf" --steps "$steps" \
    --batch "$batch" --lr "$lr" --name "distilled $network nodes=$nodes" \
    --option optimizer=adamw --option schedule=cosine --option warmup_steps=100 --option log_every=250 \
    --option checkpoint_every=500 --option weight_decay=0.0001 --option holdout_limit=4096
  distilled=$(run_of "distilled $network nodes=$nodes" new_network)
fi

say "held-out positions (opening lines never trained on): network $pretrained (game results) and $distilled (Stockfish's labels)"
for net in "$pretrained" "$distilled"; do
  q "SELECT 'network $net against Stockfish: top-1 ' || round(100 * top1::numeric, 1) || '%, WDL cross-entropy '
            || round(wdl_cross_entropy::numeric, 3) FROM pgmate.network_accuracy($net, \$q\$$holdout_sf\$q\$)"
  q "SELECT 'network $net against the game:  top-1 ' || round(100 * top1::numeric, 1) || '%, WDL cross-entropy '
            || round(wdl_cross_entropy::numeric, 3) FROM pgmate.network_accuracy($net, \$q\$$holdout_game\$q\$)"
done

if [ "$ladder_games" -gt 0 ]; then
  for sims in 1 64; do
    for net in "$pretrained" "$distilled"; do
      say "ladder: net:$net:$sims against Stockfish Skill Level 0, $ladder_games games"
      python3 bench/ladder "net:$net:$sims" --db "$db" --levels 0 --games "$ladder_games" --markdown
    done
  done
fi
say "done: network $distilled distilled from $engine at nodes=$nodes; the result-only network is $pretrained"
