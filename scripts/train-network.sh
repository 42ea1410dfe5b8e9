#!/usr/bin/env bash
# The network recipe (make network): the network pgmate ships, made from nothing on a CPU.
#
#   1. openings: varied, twin-free lines (the first 6 to 11 plies of games from `pgmate
#      generate`, which follows a Polyglot book; one game per line);
#   2. games: Stockfish against itself from those openings, the two sides at different node
#      counts (`pgmate arena`), so no two games are the same;
#   3. labels: every position evaluated by Stockfish at fixed nodes on every core
#      (`pgmate analyse`): its WDL the value target, its move the policy target;
#   4. training: the configuration below from seed 1 on `pgmate.eval_targets`, one game in
#      ten held out (by game_hash: no held-out game has a twin in training);
#   5. the weights written to networks/ (NETWORK_OUT), their SHA-256 and the held-out figures
#      printed for the card (networks/README.md);
#   6. optionally the ladder (NETWORK_LADDER_GAMES > 0).
#
#   scripts/train-network.sh [--quick] [--compare] [PGMATE]
#
# Every stage resumes after kill -9 (matches, analyses and training runs go on where they
# stopped; a stage that is complete is skipped), so the same command finishes the job.
# --quick runs every stage at a size that takes about a minute, to check that the pieces
# fit (tests/cli/network_recipe.sh); it writes to build/, never to networks/.
# --compare stops after the labels and trains each candidate configuration on the same
# rows for the same time instead (its steps from its bench/train_bench rate, measured on an
# otherwise idle machine), then prints their held-out figures next to their speeds: how the
# configuration was chosen.
#
# Settings (environment): NETWORK_DB (pgmate_network), NETWORK_OPENINGS (4000 lines),
# NETWORK_GAMES (8000), NETWORK_PLAY_NODES (400: the sides play at this and 1.5 times it),
# NETWORK_LABEL_NODES (1000), NETWORK_JOBS (every core), NETWORK_CONFIG (the configuration
# JSON), NETWORK_PRECISION (bf16), NETWORK_STEPS (12000), NETWORK_BATCH (256), NETWORK_LR (0.002), NETWORK_OUT
# (networks/pgmate_default.safetensors), NETWORK_LADDER_GAMES (0); for --compare,
# NETWORK_CANDIDATES (configurations, one JSON object a line) and NETWORK_COMPARE_SECONDS
# (300 each).
set -euo pipefail
quick=0
compare=0
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --compare) compare=1 ;;
    --*) echo "train-network: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
pgmate=${1:-build/bin/pgmate}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ $quick = 1 ]; then
  db=${NETWORK_DB:-pgmate_network_quick}
  openings=${NETWORK_OPENINGS:-40}
  games=${NETWORK_GAMES:-40}
  play_nodes=${NETWORK_PLAY_NODES:-100}
  label_nodes=${NETWORK_LABEL_NODES:-200}
  steps=${NETWORK_STEPS:-40}
  batch=${NETWORK_BATCH:-64}
  out=${NETWORK_OUT:-build/network-quick.safetensors}
  compare_seconds=${NETWORK_COMPARE_SECONDS:-3}
  bench_seconds=1
else
  db=${NETWORK_DB:-pgmate_network}
  openings=${NETWORK_OPENINGS:-4000}
  games=${NETWORK_GAMES:-8000}
  play_nodes=${NETWORK_PLAY_NODES:-400}
  label_nodes=${NETWORK_LABEL_NODES:-1000}
  steps=${NETWORK_STEPS:-12000}
  batch=${NETWORK_BATCH:-256}
  out=${NETWORK_OUT:-networks/pgmate_default.safetensors}
  compare_seconds=${NETWORK_COMPARE_SECONDS:-300}
  bench_seconds=3
fi
# tiny as it was (two attention blocks) and as it is, the shipped 32x6, wider and shallower.
candidates=${NETWORK_CANDIDATES:-'{"filters": 16, "blocks": 2, "attention_blocks": 2, "policy_head": "conv"}
{"filters": 16, "blocks": 2, "attention_blocks": 0, "policy_head": "conv"}
{"filters": 32, "blocks": 6, "attention_blocks": 0, "policy_head": "conv"}
{"filters": 48, "blocks": 4, "attention_blocks": 0, "policy_head": "conv"}
{"filters": 64, "blocks": 6, "attention_blocks": 0, "policy_head": "conv"}'}
jobs=${NETWORK_JOBS:-$(nproc)}
config=${NETWORK_CONFIG:-'{"filters": 32, "blocks": 6, "attention_blocks": 0, "policy_head": "conv"}'}
precision=${NETWORK_PRECISION:-bf16}
lr=${NETWORK_LR:-0.002}
ladder_games=${NETWORK_LADDER_GAMES:-0}
started=$(date +%s)
say() { printf '\n\033[1m[%5ds] %s\033[0m\n' "$(( $(date +%s) - started ))" "$*"; }
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

stockfish=$(command -v stockfish || echo /usr/games/stockfish)
[ -x "$stockfish" ] || { echo "train-network: Stockfish not found (make deps installs it)" >&2; exit 1; }
make -s all >/dev/null
make -s install >/dev/null
scripts/pg-server.sh start >/dev/null
eval "$(scripts/pg-server.sh env)"
psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1 || createdb "$db"
q "CREATE EXTENSION IF NOT EXISTS pgmate"
q "ALTER EXTENSION pgmate UPDATE"
q "SELECT pgmate.wait_for_worker('60 s')" >/dev/null

# ---- 1. openings
mkdir -p build
openings_file=build/network-openings-$db.pgn
if [ "$(q "SELECT count(*) FROM pgmate.games WHERE source = 'import' AND event = 'network openings'")" = 0 ]; then
  say "openings: the first plies of $openings generated games, one game per line"
  "$pgmate" generate --games "$openings" --seed 1 --out build/network-generated.pgn >/dev/null
  # Stored under an event of their own, so a rerun knows they are there.
  sed 's/^\[Event "[^"]*"\]/[Event "network openings"]/' build/network-generated.pgn \
    | "$pgmate" import --db "dbname=$db" --on-error skip - >/dev/null
fi
q "SELECT string_agg(pgn_text('{}', '{}', start, line, '*'), E'\n' ORDER BY abs(hashtext(line::text))) FROM (
       SELECT DISTINCT ON (line) start, line
       FROM (SELECT id, start, moves[1:6 + abs(hashint8(id)) % 6] AS line FROM pgmate.games
             WHERE source = 'import' AND event = 'network openings') g
       ORDER BY line, id) o" > "$openings_file"
say "openings: $(grep -c '^\[Event' "$openings_file") distinct lines"

# ---- 2. games
play_nodes_b=$(( play_nodes * 3 / 2 ))
say "games: $games Stockfish games (nodes=$play_nodes against nodes=$play_nodes_b) from those lines"
"$pgmate" arena --db "dbname=$db" --name network-corpus --games "$games" --openings "$openings_file" \
  --parallel "$jobs" --max-plies 300 --seed 1 --quiet "uci:$stockfish:nodes=$play_nodes" "uci:$stockfish:nodes=$play_nodes_b"
corpus="SELECT min(c.id) FROM pgmate.games c JOIN pgmate.matches m ON m.id = c.match_id
        WHERE m.name = 'network-corpus' GROUP BY c.game_hash"

# ---- 3. labels
say "labels: every position by Stockfish at $label_nodes nodes, $jobs engines"
"$pgmate" analyse --db "dbname=$db" --where "id IN ($corpus)" --engine "uci:$stockfish" --nodes "$label_nodes" \
  --jobs "$jobs"
engine=$(q "SELECT engine FROM pgmate.position_evals WHERE engine LIKE 'Stockfish%' AND limits = 'nodes=$label_nodes' LIMIT 1")

# ---- 4. training
rows="FROM pgmate.eval_targets t JOIN pgmate.games g ON g.id = t.game_id
      WHERE g.id IN ($corpus) AND t.ply >= (g.arena->>'opening_plies')::int
        AND t.engine = '$engine' AND t.limits = 'nodes=$label_nodes'"
train="SELECT t.board, t.history, t.repetitions, t.best_move AS played, t.wdl $rows AND abs(g.game_hash) % 10 <> 0"
holdout="SELECT t.board, t.history, t.repetitions, t.best_move AS played, t.wdl $rows AND abs(g.game_hash) % 10 = 0"
q "SELECT (SELECT count(*) FROM ($train) t) || ' training positions, ' || (SELECT count(*) FROM ($holdout) h)
          || ' held-out positions (games never trained on, no twin in training)'"

# train CONFIG STEPS NAME: the network NAME trained from seed 1 (resumed if it was stopped,
# found if it is done); its id in $trained.
train() {
  local config=$1 steps=$2 name=$3 start
  start=$(q "SELECT coalesce((SELECT min(id) FROM pgmate.networks WHERE name = 'start of $name'),
                            pgmate.init_network('start of $name', '$config'::jsonb, seed => 1))")
  trained=$(q "SELECT r.new_network FROM pgmate.training_runs r JOIN pgmate.networks n ON n.id = r.new_network
               WHERE n.name = '$name' AND r.status = 'finished' ORDER BY r.id LIMIT 1")
  if [ -z "$trained" ]; then
    say "train: $config, $steps steps of $batch from network $start"
    "$pgmate" train --db "dbname=$db" --network "$start" --data "$train" --holdout "$holdout" --steps "$steps" \
      --batch "$batch" --lr "$lr" --name "$name" --option optimizer=adamw --option schedule=cosine \
      --option warmup_steps=$(( steps / 25 + 1 )) --option log_every=$(( steps / 10 > 0 ? steps / 10 : 1 )) \
      --option checkpoint_every=$(( steps / 10 > 0 ? steps / 10 : 1 )) --option weight_decay=0.0001 \
      --option precision="$precision" --option holdout_limit=4096
    trained=$(q "SELECT r.new_network FROM pgmate.training_runs r JOIN pgmate.networks n ON n.id = r.new_network
                 WHERE n.name = '$name' AND r.status = 'finished' ORDER BY r.id LIMIT 1")
  fi
  [ -n "$trained" ] || { echo "train-network: the training of $name did not finish" >&2; exit 1; }
}
# The held-out figures of network $1: positions, top-1 %, policy and WDL cross-entropy, as
# "a|b|c|d".
holdout_figures() {
  q "SELECT positions || '|' || round(100 * top1::numeric, 1) || '|' || round(policy_cross_entropy::numeric, 3)
            || '|' || round(wdl_cross_entropy::numeric, 3) FROM pgmate.network_accuracy($1, \$q\$$holdout\$q\$)"
}

# ---- 4b. (--compare) the candidates at equal training time
if [ $compare = 1 ]; then
  say "compare: each candidate trained for about $compare_seconds s on the same rows, seed 1, $precision"
  rows=()
  while IFS= read -r candidate; do
    [ -n "$candidate" ] || continue
    cfg=$(echo "$candidate" | tr -d ' ')
    # train_bench's last line: name, parameters, train samples/s, forward positions/s, ratio.
    read -r parameters train_rate forward_rate < <("$(dirname "$pgmate")/train_bench" --seconds "$bench_seconds" \
      --batch "$batch" --precision "$precision" "$candidate" | tail -n 1 | awk '{print $(NF-3), $(NF-2), $(NF-1)}')
    # A candidate keeps the steps of the last measurement stored, so that a stopped
    # comparison resumes its training (another NETWORK_DB measures afresh).
    compare_steps=$(q "SELECT max(substring(name FROM 'steps=([0-9]+)\$')::int) FROM pgmate.networks
                       WHERE name LIKE 'start of compare $cfg steps=%'")
    [ -n "$compare_steps" ] || compare_steps=$(awk -v r="$train_rate" -v s="$compare_seconds" -v b="$batch" \
                                                 'BEGIN { n = int(r * s / b); print n < 2 ? 2 : n }')
    train "$candidate" "$compare_steps" "compare $cfg steps=$compare_steps"
    seconds=$(q "SELECT round(extract(epoch FROM finished_at - started_at)) FROM pgmate.training_runs
                 WHERE new_network = $trained")
    IFS='|' read -r positions top1 policy_ce wdl_ce < <(holdout_figures "$trained")
    rows+=("| \`$cfg\` | $parameters | ${train_rate%.*} | ${forward_rate%.*} | $compare_steps | $seconds | $positions | $top1% | $policy_ce | $wdl_ce |")
  done <<< "$candidates"
  say "compare: held-out figures at equal training time (train_bench rates at batch $batch, $precision)"
  echo "| configuration | parameters | train samples/s | forward positions/s | steps | seconds | held-out positions | top-1 | policy CE | WDL CE |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  exit 0
fi

name="network $(echo "$config" | tr -d ' ') steps=$steps"
train "$config" "$steps" "$name"

# ---- 5. the file and the card's figures
mkdir -p "$(dirname "$out")"
q "SELECT encode(weights, 'base64') FROM pgmate.networks WHERE id = $trained" | base64 -d > "$out.partial"
mv "$out.partial" "$out"
say "network $trained written to $out: $(stat -c %s "$out") bytes, SHA-256 $(sha256sum "$out" | cut -d' ' -f1)"
IFS='|' read -r positions top1 policy_ce wdl_ce < <(holdout_figures "$trained")
echo "held-out: $positions positions, top-1 against Stockfish's move $top1%, policy cross-entropy $policy_ce, WDL cross-entropy against Stockfish's WDL $wdl_ce"
q "SELECT 'corpus: ' || count(*) || ' games, ' || sum(ply_count) || ' plies; labels: ' ||
          (SELECT count(*) FROM pgmate.position_evals WHERE engine = '$engine' AND limits = 'nodes=$label_nodes')
   FROM pgmate.games WHERE id IN ($corpus)"

# ---- 6. the ladder
if [ "$ladder_games" -gt 0 ]; then
  for sims in 1 400; do
    say "ladder: net:$trained:$sims, $ladder_games games a rung"
    python3 bench/ladder "net:$trained:$sims" --db "$db" --levels 0,3 --games "$ladder_games" --markdown
  done
fi
say "done: network $trained of database $db, $out"
