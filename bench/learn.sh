#!/usr/bin/env bash
# The learning loop measured (figures in bench/RESULTS.md, "learn"), in the database that
# `make pretrain` filled (its Stockfish corpus and pretrained network):
#
#   bench/learn.sh pretrained MINUTES  the loop from the pretrained network for MINUTES, then
#                                      the final best against it over 100 game pairs at equal
#                                      simulations, each promoted network against the one it
#                                      replaced over as many, held-out top-1 of both, the last KL
#   bench/learn.sh random MINUTES      the loop from a new network of the same preset, then the
#                                      newest network against the start over 20 pairs
#   bench/learn.sh veto                candidates damaged on purpose (their weights replaced by
#                                      noise) are vetoed, and escalation climbs levels 1 to 4
#
# The loop runs with its defaults (the gate, the arena interval, the training steps) but
# for the simulations. Environment: DB (default pgmate_pretrain), NETWORK (default: the
# newest network named 'pretrained %'), SIMULATIONS (32), CHECK_GAMES (200: games of each
# check match after the loop), PGMATE (build/bin/pgmate), OPTIONS (more --option
# KEY=VALUE for the run, e.g. "--option promotion_elo1=30": promotion by SPRT).
set -euo pipefail
mode=${1:?usage: bench/learn.sh pretrained|random|veto [MINUTES]}
minutes=${2:-30}
DB=${DB:-pgmate_pretrain}
PGMATE=${PGMATE:-build/bin/pgmate}
SIMULATIONS=${SIMULATIONS:-32}
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

q "ALTER EXTENSION pgmate UPDATE" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null
start=${NETWORK:-$(q "SELECT id FROM pgmate.networks WHERE name LIKE 'pretrained %' ORDER BY id DESC LIMIT 1")}
[ -n "$start" ] || { echo "no pretrained network in $DB: run make pretrain first" >&2; exit 1; }
preset=$(q "SELECT config->>'preset' FROM pgmate.networks WHERE id = $start")
CHECK_GAMES=${CHECK_GAMES:-200}
# The pretraining corpus (the match `make pretrain` named "corpus"), split as it was: one
# game of each set of copies, book moves left out, every tenth opening line held out.
corpus="SELECT t.* FROM pgmate.game_targets t JOIN pgmate.games g ON g.id = t.game_id
        WHERE g.id IN (SELECT min(c.id) FROM pgmate.games c JOIN pgmate.matches m ON m.id = c.match_id
                       WHERE m.name = 'corpus' GROUP BY c.game_hash)
          AND t.ply >= (g.arena->>'opening_plies')::int"
holdout="$corpus AND hashtext(g.arena->>'opening') % 10 = 0"
pretrain="$corpus AND hashtext(g.arena->>'opening') % 10 <> 0"
run="bench $mode $(date +%Y%m%d-%H%M%S)"
common=(--option simulations=$SIMULATIONS --option parallel=32 --option max_plies=300 --option seed=1 ${OPTIONS:-})

loop_for() {  # run the loop until MINUTES have passed, an iteration at a time
  local deadline=$(( $(date +%s) + minutes * 60 ))
  local first=1
  while [ "$(date +%s)" -lt "$deadline" ]; do
    if [ $first = 1 ]; then "$PGMATE" learn --db "dbname=$DB" --run "$run" --more 1 "$@" | grep '^iteration'
    else "$PGMATE" learn --db "dbname=$DB" --run "$run" --more 1 | grep '^iteration'; fi
    first=0
  done
}

case "$mode" in
  pretrained)
    t0=$(date +%s)
    loop_for --network "$start" "${common[@]}" --option pretrain_data="$pretrain" --option holdout="$holdout"
    best=$(q "SELECT best_network FROM pgmate.learning_runs WHERE name = '$run'")
    echo "loop: $(( ($(date +%s) - t0) / 60 )) min, $(q "SELECT iterations FROM pgmate.learning_runs WHERE name = '$run'") iterations, best network $best"
    q "SELECT decision, count(*) FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
       WHERE r.name = '$run' GROUP BY decision"
    echo "last KL: $(q "SELECT round(kl::numeric, 4) FROM pgmate.learning_log WHERE run = '$run' ORDER BY iteration DESC LIMIT 1")"
    for n in "$start" "$best"; do
      echo "held-out top-1 of network $n: $(q "SELECT round(100 * top1::numeric, 2) FROM pgmate.network_accuracy($n, \$q\$$holdout\$q\$)")%"
    done
    echo "arena's share of the loop's time: $(q "SELECT round(100 * sum(coalesce(arena_seconds, 0))
        / sum(coalesce(selfplay_seconds, 0) + coalesce(training_seconds, 0) + coalesce(arena_seconds, 0)))
        FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id WHERE r.name = '$run'")%"
    "$PGMATE" arena --db "dbname=$DB" --games "$CHECK_GAMES" --openings eco --parallel 8 --max-plies 300 --quiet \
      --name "$run: best vs start" "net:$best:$SIMULATIONS" "net:$start:$SIMULATIONS" | tail -n 3
    # Each promotion checked by a match of its own: the promoted network against the one it replaced.
    for pair in $(q "SELECT i.candidate || ':' || i.best_network FROM pgmate.learning_iterations i
                     JOIN pgmate.learning_runs r ON r.id = i.run_id
                     WHERE r.name = '$run' AND i.decision = 'promoted' ORDER BY i.iteration"); do
      promoted=${pair%%:*} replaced=${pair##*:}
      if [ "$promoted" = "$best" ] && [ "$replaced" = "$start" ]; then
        echo "promotion of $promoted over $replaced: the match above"; continue
      fi
      echo "promotion of $promoted over $replaced:"
      "$PGMATE" arena --db "dbname=$DB" --games "$CHECK_GAMES" --openings eco --parallel 8 --max-plies 300 --quiet \
        --name "$run: $promoted vs $replaced" "net:$promoted:$SIMULATIONS" "net:$replaced:$SIMULATIONS" | tail -n 3
    done
    ;;
  random)
    fresh=$(q "SELECT pgmate.init_network('bench random $preset', '{\"preset\": \"$preset\"}', 7)")
    t0=$(date +%s)
    loop_for --network "$fresh" "${common[@]}" --option kl_weight=0
    newest=$(q "SELECT current_network FROM pgmate.learning_runs WHERE name = '$run'")
    echo "loop: $(( ($(date +%s) - t0) / 60 )) min, $(q "SELECT iterations FROM pgmate.learning_runs WHERE name = '$run'") iterations, newest network $newest"
    "$PGMATE" arena --db "dbname=$DB" --games 40 --openings eco --parallel 8 --max-plies 300 --quiet \
      --name "$run: newest vs start" "net:$newest:$SIMULATIONS" "net:$fresh:$SIMULATIONS" | tail -n 3
    ;;
  veto)
    opts=(--network "$start" "${common[@]}" --option games=8 --option steps=20 --option arena_games=10
          --option arena_interval=1 --option veto_threshold=0.35 --option promotion_threshold=0.55
          --option sanity_games=0 --option pretrain_data="$pretrain")
    for level in 1 2 3 4; do
      # train a candidate, then replace its weights with noise before the arena sees it
      "$PGMATE" learn --db "dbname=$DB" --run "$run" --more 1 "${opts[@]}" --option stop_after=training >/dev/null
      cand=$(q "SELECT new_network FROM pgmate.training_runs WHERE new_network IS NOT NULL ORDER BY id DESC LIMIT 1")
      q "UPDATE pgmate.networks SET weights = pgmate.network_init_weights(config::text, $level),
                                    notes = 'damaged on purpose by bench/learn.sh' WHERE id = $cand"
      "$PGMATE" learn --db "dbname=$DB" --run "$run" --more 1 "${opts[@]}" | grep '^iteration'
    done
    q "SELECT iteration, decision, veto_level, round(pretrain_mix::numeric, 2), lr, excluded_games, score_vs_best
       FROM pgmate.learning_log WHERE run = '$run' ORDER BY iteration"
    ;;
  *) echo "unknown mode $mode" >&2; exit 2 ;;
esac
echo "run: $run"
