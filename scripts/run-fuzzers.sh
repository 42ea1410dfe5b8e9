#!/usr/bin/env bash
# Runs every libFuzzer target for a bounded time on a copy of its seed corpus.
# Usage: scripts/run-fuzzers.sh FUZZ_BUILD_DIR SECONDS_EACH
set -euo pipefail
build=$1
seconds=$2
root=$(cd "$(dirname "$0")/.." && pwd)
passed=0
failed=0
for name in fen uci san pgn safetensors; do
  corpus=$(mktemp -d)
  cp "$root/tests/fuzz/corpus/$name"/* "$corpus"/
  echo "fuzz_$name: ${seconds}s"
  if "$build/bin/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 \
       -artifact_prefix="$build/crash-$name-" "$corpus" > "$build/fuzz_$name.log" 2>&1; then
    passed=$((passed + 1))
    grep -E 'stat::number_of_executed_units' "$build/fuzz_$name.log" || true
  else
    failed=$((failed + 1))
    tail -n 40 "$build/fuzz_$name.log"
  fi
  rm -rf "$corpus"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
