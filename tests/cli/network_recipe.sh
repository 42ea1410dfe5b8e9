#!/usr/bin/env bash
# The network recipe at its smallest (scripts/train-network.sh --quick): openings, Stockfish
# games, labels, training and the weights file fit together; run again, every stage is
# found done and the same network comes out; the file is a network pgmate uci plays with.
#
#   tests/cli/network_recipe.sh PGMATE
#
# Prints "network_recipe: N passed, M failed" and exits 1 on any failure.
set -u
if [ $# -ne 1 ]; then
  echo "usage: $0 PGMATE" >&2
  exit 2
fi
PGMATE=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=pgmate_network_recipe_test
. "$(dirname "$0")/checks.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
dropdb --if-exists "$DB" 2>/dev/null
export NETWORK_DB=$DB NETWORK_OUT=$TMP/quick.safetensors

out=$(scripts/train-network.sh --quick "$PGMATE" 2>&1)
check "quick: exit" "$?" 0
check_match "quick: labels" "$out" "analysed [0-9]+ positions of [0-9]+ games with Stockfish"
check_match "quick: trained" "$out" "run [0-9]+ finished: network [0-9]+"
check_match "quick: held-out figures" "$out" "held-out: [0-9]+ positions, top-1 against Stockfish's move"
[ -s "$TMP/quick.safetensors" ] && pass "quick: the file" || fail "quick: the file"
sha=$(sha256sum "$TMP/quick.safetensors" | cut -d' ' -f1)
check "quick: the file is the stored network" \
  "$(q "SELECT encode(weights_sha256, 'hex') FROM pgmate.networks WHERE name LIKE 'network %' ORDER BY id DESC LIMIT 1")" "$sha"

# Again: every stage is found done.
out=$(scripts/train-network.sh --quick "$PGMATE" 2>&1)
check "again: exit" "$?" 0
check_match "again: no new games" "$out" "0 games stored|40 of 40 games stored"
check_match "again: no new labels" "$out" "analysed 0 positions"
check "again: the same network" "$(sha256sum "$TMP/quick.safetensors" | cut -d' ' -f1)" "$sha"

# The comparison of configurations: each candidate trained on the same rows, a table row each.
out=$(NETWORK_CANDIDATES='{"filters": 8, "blocks": 1, "attention_blocks": 1, "policy_head": "conv"}
{"filters": 8, "blocks": 1, "attention_blocks": 0, "policy_head": "conv"}' NETWORK_COMPARE_SECONDS=1 \
      scripts/train-network.sh --quick --compare "$PGMATE" 2>&1)
check "compare: exit" "$?" 0
check "compare: a row a candidate" "$(grep -c '^| `{"filters":8,"blocks":1,"attention_blocks":[01],"policy_head":"conv"}` | [0-9]* | [0-9]* | [0-9]* | [0-9]* | [0-9]* | [0-9]* | [0-9.]*% |' <<< "$out")" 2
check "compare: the shipped configuration's network untouched" "$(sha256sum "$TMP/quick.safetensors" | cut -d' ' -f1)" "$sha"

# The file plays.
out=$( (printf 'uci\nisready\nposition startpos\ngo nodes 20\n'; sleep 5; printf 'quit\n') |
       timeout 60 "$PGMATE" uci --network-file "$TMP/quick.safetensors" --simulations 20 2>/dev/null)
check_match "uci: a move from the file's network" "$out" "bestmove [a-h][1-8][a-h][1-8]"
dropdb "$DB"
echo "network_recipe: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
