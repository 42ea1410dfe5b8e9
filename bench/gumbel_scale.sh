#!/usr/bin/env bash
# How the Gumbel root's Q normalisation shapes the policy target and the play, on one
# network: self-play games at the same simulations with each normalisation, the improved
# policy's mean maximum and entropy against the network's priors, then paired matches at
# equal simulations.
#
#   bench/gumbel_scale.sh NETWORK [DB] [SIMULATIONS] [GAMES] [MATCH_GAMES]
#
# Normalisations: bounds ((q + 1) / 2, c_scale 1: the paper), minmax (rescaled over the
# root's moves, c_scale 0.1: mctx's defaults) and minmax at c_scale 1 (pgmate before
# 0.10.0, which took the rescale from mctx and the scale from the paper).
set -euo pipefail
net=${1:?usage: bench/gumbel_scale.sh NETWORK [DB] [SIMULATIONS] [GAMES] [MATCH_GAMES]}
db=${2:-pgmate_pretrain}
sims=${3:-32}
games=${4:-8}
match_games=${5:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
pgmate=${PGMATE:-$root/build/bin/pgmate}
eval "$("$root/scripts/pg-server.sh" env)"
stamp=$(date +%Y%m%d-%H%M%S)
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$db" -c "$1"; }

declare -A settings=([bounds]="q_normalise=bounds" [minmax]="q_normalise=minmax"
                     [minmax-c1]="q_normalise=minmax,c_scale=1")
echo "network $net, $sims simulations, $games self-play games per normalisation"
printf '%-10s %10s %12s %14s %16s\n' setting positions "mean max" "entropy" "prior entropy"
for name in bounds minmax minmax-c1; do
  run="gumbel-scale $name $stamp"
  opts=(--option search=gumbel)
  IFS=, read -ra kv <<<"${settings[$name]}"
  for o in "${kv[@]}"; do opts+=(--option "$o"); done
  "$pgmate" selfplay --db "dbname=$db" --network "$net" --games "$games" --parallel "$games" --simulations "$sims" \
    --run "$run" --seed 1 --quiet "${opts[@]}" >/dev/null
  q "SELECT format('%-10s %10s %12s %14s %16s', '$name', count(*),
                   round(avg((SELECT max(x) FROM unnest(p.policy) x))::numeric, 3),
                   round(avg(-(SELECT sum(x * ln(x)) FROM unnest(p.policy) x WHERE x > 0))::numeric, 3),
                   round(avg(-(SELECT sum(x * ln(x)) FROM unnest(p.priors) x WHERE x > 0))::numeric, 3))
     FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id
     WHERE g.selfplay->>'run' = '$run' AND cardinality(p.moves) > 1"
done

# Sequential halving at 32 simulations and 16 considered moves (31 visits after the root's
# own): 16 moves get 1, 8 of them 2, 4 of them 3, and the finalists 5 and 4; the move
# played is the most visited.
if [ "$sims" = 32 ]; then
  q "SELECT 'positions with 16 or more moves whose visits follow the schedule: ' || count(*) FILTER (WHERE scheduled)
            || ' of ' || count(*) || '; the move played the most visited: ' || count(*) FILTER (WHERE most_visited)
     FROM (SELECT (SELECT array_agg(v ORDER BY v DESC) FROM unnest(p.visits) v WHERE v > 0)
                    = '{5,4,3,3,2,2,2,2,1,1,1,1,1,1,1,1}'::int[] AS scheduled,
                  p.visits[array_position(p.moves, p.played)] = (SELECT max(v) FROM unnest(p.visits) v) AS most_visited
           FROM pgmate.selfplay_positions p JOIN pgmate.games g ON g.id = p.game_id
           WHERE g.selfplay->>'run' = 'gumbel-scale bounds $stamp' AND cardinality(p.moves) >= 16) t"
fi

player() { echo "net:$net:$sims:search=gumbel,$1"; }
for pair in "bounds minmax" "bounds minmax-c1"; do
  read -r a b <<<"$pair"
  echo
  "$pgmate" arena --db "dbname=$db" --name "gumbel-scale $a-$b $stamp" --games "$match_games" --openings eco \
    --parallel 2 --max-plies 300 --quiet "$(player "${settings[$a]}")" "$(player "${settings[$b]}")"
done
