#!/usr/bin/env bash
# The GPU check's loop stage on this machine's CPU (scripts/gpu-check.sh --no-gpu --stage loop
# --quick), from the bundle only: make gpu-bundle packs PostgreSQL 15, the extension and the
# client from Debian's packages; the stage unpacks them into a temporary folder, runs a
# server of its own from them (its own port and socket) with this build's pgmate-worker on
# the CPU, the learning loop from the shipped network for a few iterations and a final
# match, and leaves its files in $OUT. What a GPU window will run, proven before one is lent.
# Also the stages' deadline: the loop's, and the check stage's benchmarks'.
#
#   tests/cli/gpu_loop.sh PGMATE
#
# Prints "gpu_loop: N passed, M failed" and exits 1 on any failure.
set -u
if [ $# -ne 1 ]; then
  echo "usage: $0 PGMATE" >&2
  exit 2
fi
PGMATE=$(readlink -f "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(dirname "$(dirname "$PGMATE")")
. "$(dirname "$0")/checks.sh"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$ROOT"
# check_run NAME STATUS OUTPUT: a stage's run exited 0 (else its output's end is shown) and
# printed no shell error.
check_run() {
  check "$1: exit" "$2" 0
  [ "$2" -eq 0 ] || echo "$3" | tail -30
  check "$1: no shell errors" "$(grep -Ec 'command not found|syntax error|unbound variable' <<< "$3")" 0
}

out=$(scripts/gpu-bundle.sh "$BUILD" 2>&1)
check "bundle: exit" "$?" 0
check_match "bundle: PostgreSQL from Debian's packages" "$out" "packages: .*postgresql-15 postgresql-client-15"
size=$(du -sm .gpu-bundle | cut -f1)
[ "$size" -lt 60 ] && pass "bundle: $size MiB, under 60" || fail "bundle: $size MiB, not under 60"
listing=$(tar -tJf .gpu-bundle/postgresql.tar.xz)
check_match "bundle: the server" "$listing" "usr/lib/postgresql/15/bin/postgres$"
check_match "bundle: the extension built here" "$listing" "usr/lib/postgresql/15/lib/pgmate.so$"
check_match "bundle: the shipped network" "$listing" "usr/share/postgresql/15/extension/pgmate_default.safetensors$"
check_match "bundle: libpqxx" "$listing" "libpqxx-6.4.so$"
check "bundle: no JIT" "$(grep -c 'llvmjit' <<< "$listing")" 0
check "bundle: no worker (the GPU machine builds its own)" "$(grep -c 'bin/pgmate-worker' <<< "$listing")" 0

before=$(ls -d /tmp/pgmate-loop.* 2>/dev/null | wc -l)
out=$(OUT=$TMP/out scripts/gpu-check.sh --no-gpu --stage loop --quick --worker "$BUILD/bin/pgmate-worker" 2>&1)
check_run "loop stage" "$?" "$out"
loop=$(cat "$TMP/out/loop.txt" 2>/dev/null)
check_match "loop stage: PostgreSQL from the bundle" "$loop" "server: PostgreSQL 15\\.[0-9]+ .*from the bundle"
check_match "loop stage: the worker on the CPU" "$loop" "worker: cpu"
# install_network reads the file beside the extension's scripts, which the server finds
# relative to its own binary: the bundle's tree, not this machine's PostgreSQL.
check_match "loop stage: the shipped network from the bundle's share folder" "$loop" "start: network [0-9]+, pgmate's shipped network"
check_match "loop stage: iterations" "$loop" "loop: [1-9][0-9]* iterations in [0-9]+ s: [0-9]+ games"
check_match "loop stage: decisions" "$loop" "iteration 1: (kept|promoted|vetoed|trained)"
check_match "loop stage: the final match's Elo" "$loop" "match: network [0-9]+ .* [0-9]+/[0-9]+/[0-9]+, score [0-9.]+, Elo -?[0-9]+ \\[-?[0-9]+, -?[0-9]+\\]"
check "loop stage: the learning log" "$(head -c 19 "$TMP/out/learning_log.csv")" "run,iteration,decis"
check_match "loop stage: the chart" "$(head -c 200 "$TMP/out/chart.svg")" "<svg"
[ -s "$TMP/out/network.safetensors" ] && pass "loop stage: the loop's network" || fail "loop stage: the loop's network"
check_match "loop stage: the dump holds the run" "$(pg_restore -l "$TMP/out/run.dump" 2>&1)" "TABLE DATA pgmate learning_iterations"
size=$(du -m "$TMP/out/run.dump" | cut -f1)
[ "$size" -lt 16 ] && pass "loop stage: the dump is $size MiB" || fail "loop stage: the dump is $size MiB, 16 or more"
check "loop stage: its server stopped and its folder removed" "$(ls -d /tmp/pgmate-loop.* 2>/dev/null | wc -l)" "$before"
check "summary" "$(grep -c '^ok   the loop stage' "$TMP/out/summary.txt")" 1
check_match "summary: the stage's deadline" "$(cat "$TMP/out/summary.txt")" "the loop stage has until [0-9]+ s after the stage's start"

# A deadline close at hand (a GPU call ends hard): the loop gives up its time to the final
# match's reserve, and the stage still writes every file.
out=$(OUT=$TMP/cut scripts/gpu-loop.sh "$BUILD/bin/pgmate-worker" cpu --quick --deadline $(($(date +%s) + 70)) 2>&1)
check_run "deadline" "$?" "$out"
loop=$(cat "$TMP/cut/loop.txt" 2>/dev/null)
check_match "deadline: the loop cut to leave the match its reserve" "$loop" "the loop's wall time cut from 45 s to [0-9]+ s, to keep 30 s"
check_match "deadline: the match played" "$loop" "match: network [0-9]+ .*, [0-9]+ of 4 games in"
[ -s "$TMP/cut/run.dump" ] && pass "deadline: the dump" || fail "deadline: the dump"

# The check stage's benchmarks under a deadline already passed: no run starts, each part
# says so, and the table is written as it goes.
out=$(python3 bench/gpu_bench --bin "$BUILD/bin" --out "$TMP/bench.txt" --deadline $(($(date +%s) - 1)) 2>&1)
check "benchmarks past the deadline: exit" "$?" 0
check "benchmarks past the deadline: every part skipped" "$(grep -c ': not run: the deadline passed$' "$TMP/bench.txt")" 4
check "benchmarks past the deadline: nothing run" "$(grep -c '^== ' "$TMP/bench.txt")" 0

echo "gpu_loop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
