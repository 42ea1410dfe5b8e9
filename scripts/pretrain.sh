#!/usr/bin/env bash
# The pretraining recipe (make pretrain): on a fresh database `pgmate_pretrain` of the
# project's server, a corpus of Stockfish games from ECO openings (pgmate arena; the two
# sides at different node counts, so no game is played twice), a small network trained on
# the CPU from their positions with every tenth opening line held out (pgmate train), its held-out accuracy against the uniform baseline, and a 40-game match of the
# trained network against pure MCTS at the same number of simulations. The chart of the
# run goes to build/pretrain-chart.svg.
#
#   scripts/pretrain.sh [PGMATE]
#
# Settings (environment): PRETRAIN_GAMES (corpus games, 1000), PRETRAIN_NODES (Stockfish
# nodes a move, 1000), PRETRAIN_NETWORK (a network configuration or preset, "tiny"),
# PRETRAIN_STEPS (2500), PRETRAIN_BATCH (256), PRETRAIN_LR (0.002), PRETRAIN_WEIGHT_DECAY
# (0.0001), PRETRAIN_VALUE_WEIGHT (1), PRETRAIN_SIMULATIONS (64), PRETRAIN_MATCH_GAMES (40),
# PRETRAIN_DB (pgmate_pretrain).
set -euo pipefail
pgmate=${1:-build/bin/pgmate}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
games=${PRETRAIN_GAMES:-1000}
nodes=${PRETRAIN_NODES:-1000}
network=${PRETRAIN_NETWORK:-tiny}
steps=${PRETRAIN_STEPS:-2500}
batch=${PRETRAIN_BATCH:-256}
lr=${PRETRAIN_LR:-0.002}
weight_decay=${PRETRAIN_WEIGHT_DECAY:-0.0001}
value_weight=${PRETRAIN_VALUE_WEIGHT:-1}
simulations=${PRETRAIN_SIMULATIONS:-64}
match_games=${PRETRAIN_MATCH_GAMES:-40}
db=${PRETRAIN_DB:-pgmate_pretrain}
started=$(date +%s)
say() { printf '\n\033[1m[%4ds] %s\033[0m\n' "$(( $(date +%s) - started ))" "$*"; }
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

stockfish=$(command -v stockfish || echo /usr/games/stockfish)
[ -x "$stockfish" ] || { echo "pretrain: Stockfish not found (make deps installs it)" >&2; exit 1; }

make -s all >/dev/null
make -s install >/dev/null
scripts/pg-server.sh start
eval "$(scripts/pg-server.sh env)"
dropdb --if-exists "$db"
createdb "$db"
q "CREATE EXTENSION pgmate"
q "SELECT pgmate.wait_for_worker('60 s')" >/dev/null
"$pgmate" import --openings --db "dbname=$db" >/dev/null

# Stockfish at fixed nodes is deterministic: the same engine on both sides would play each
# opening's pair as one game twice. The sides search different node counts, so a pair's
# games differ.
nodes_b=$(( nodes * 6 / 5 ))
say "corpus: $games Stockfish games (nodes=$nodes against nodes=$nodes_b) from ECO openings"
"$pgmate" arena --db "dbname=$db" --name corpus --games "$games" --openings eco --parallel 2 --max-plies 200 \
  --quiet "uci:$stockfish:nodes=$nodes" "uci:$stockfish:nodes=$nodes_b"

# Training and held-out rows: one game of each set of copies (game_hash), the book moves of
# the opening left out (scripted, and shared by every game of the line), and held out by
# opening line (every tenth ECO line): no held-out game has a twin, or a game from the same
# line, in training.
corpus="SELECT t.board, t.history, t.repetitions, t.played, t.z FROM pgmate.game_targets t
        JOIN pgmate.games g ON g.id = t.game_id
        WHERE g.id IN (SELECT min(c.id) FROM pgmate.games c JOIN pgmate.matches m ON m.id = c.match_id
                       WHERE m.name = 'corpus' GROUP BY c.game_hash)
          AND t.ply >= (g.arena->>'opening_plies')::int"
train="$corpus AND hashtext(g.arena->>'opening') % 10 <> 0"
holdout="$corpus AND hashtext(g.arena->>'opening') % 10 = 0"
q "SELECT count(*) || ' games, ' || count(DISTINCT game_hash) || ' distinct; '
          || (SELECT count(*) FROM ($train) t) || ' training positions, '
          || (SELECT count(*) FROM ($holdout) h) || ' held-out positions' FROM pgmate.games WHERE source = 'arena'"
q "SELECT 'held-out games with a copy in training: ' || count(*) FROM pgmate.games h
   WHERE hashtext(h.arena->>'opening') % 10 = 0 AND h.match_id IS NOT NULL
     AND EXISTS (SELECT 1 FROM pgmate.games t WHERE t.game_hash = h.game_hash AND t.match_id = h.match_id
                 AND hashtext(t.arena->>'opening') % 10 <> 0)"
case $network in
  \{*) config=$network ;;
  *) config="{\"preset\": \"$network\"}" ;;
esac
net=$(q "SELECT pgmate.init_network('pretrain $network', '$config'::jsonb, seed => 1)")

say "train: network $net ($network), $steps steps of $batch on the CPU"
"$pgmate" train --db "dbname=$db" --network "$net" --data "$train" --holdout "$holdout" --steps "$steps" \
  --batch "$batch" --lr "$lr" --name "pretrained $network" \
  --option optimizer=adamw --option schedule=cosine --option warmup_steps=100 --option log_every=250 \
  --option checkpoint_every=500 --option weight_decay="$weight_decay" --option value_weight="$value_weight" \
  --option holdout_limit=4096
trained=$(q "SELECT new_network FROM pgmate.training_runs WHERE network_id = $net AND status = 'finished'")
[ -n "$trained" ] || { echo "pretrain: training did not finish" >&2; exit 1; }

say "held-out accuracy (games never trained on) against the uniform baseline"
q "SELECT 'held-out positions ' || positions || ': top-1 ' || round(100 * top1::numeric, 1) || '%, policy cross-entropy '
          || round(policy_cross_entropy::numeric, 3) || ', WDL cross-entropy ' || round(wdl_cross_entropy::numeric, 3)
     FROM pgmate.network_accuracy($trained, \$q\$$holdout\$q\$)"
q "SELECT 'uniform baseline: ' || round(100 * avg(1.0 / n), 1) || '% (1 / legal moves)'
     FROM (SELECT (SELECT count(*) FROM legal_moves(h.board)) AS n FROM ($holdout) h) t"

say "match: net:$trained:$simulations against mcts:$simulations, $match_games games"
"$pgmate" arena --db "dbname=$db" --name "pretrained vs mcts" --games "$match_games" --openings eco --parallel 2 \
  --max-plies 300 --quiet "net:$trained:$simulations" "mcts:$simulations"

mkdir -p build
q "SELECT pgmate.training_chart($trained)" > build/pretrain-chart.svg
say "done: network $trained; chart in build/pretrain-chart.svg; the log in pgmate.training_log of database $db"
