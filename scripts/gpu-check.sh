#!/usr/bin/env bash
# The GPU check, in two stages, each one call of at most 10 minutes on a bare GPU machine:
#
#   scripts/gpu-check.sh [--stage check|loop] [--tests-only | --bench-only] [--quick] [--no-gpu]
#                        [--profile] [--worker FILE]
#
# --stage check (the default): builds pgmate for this GPU against the machine's CUDA
#   LibTorch, runs every GPU test and the GPU benchmarks (none starting after STAGE_SECONDS,
#   below; the most wanted first).
# --stage loop: the whole system: builds pgmate-worker for this GPU, then runs PostgreSQL
#   from the bundle (make gpu-bundle) with pgmate's extension, the worker on the GPU and the
#   learning loop from the shipped network for a fixed wall time, and one Elo figure of the
#   loop's network against the start (scripts/gpu-loop.sh; its files under $OUT). Its files
#   are all written within STAGE_SECONDS (default 560) of the stage's start: the loop gives
#   up time to the final match, and the match stops between games at the deadline.
#   A GPU window runs the loop stage first until it has run once, then the check.
#
# --no-gpu: a dry run on a development machine without a GPU: builds as on the bare image
# (no libpqxx, GoogleTest from .gpu-bundle/, for sm_90, against PyTorch's LibTorch when
# python3 has one, else Debian's), and checks that the GPU tests skip cleanly and the
# benchmarks say why they cannot run; with --stage loop, the loop runs on the CPU.
# --worker FILE: the loop stage uses this pgmate-worker instead of building one.
# --profile (check stage): Nsight Compute on the fused two-ply leaf kernel (every move of
#   the last two plies) in gpu_perft_bench --quick's three chess cases (start depth 6, Kiwipete
#   depth 5, start depth 6 with magic tables; the warm-up's small launches skipped):
#   throughput against the card's limits, occupancy, registers and warp stalls, into
#   profile.txt (where ncu can read the counters).
#
# Needs: nvcc, cmake, a C++20 compiler, python3 with PyTorch (its C++ LibTorch is what the
# worker builds against), and what `make gpu-bundle` puts in .gpu-bundle/ on a development
# machine (carried with the tree): GoogleTest's sources, PostgreSQL 15 and pgmate's
# extension and client. The machine's own libpqxx and PostgreSQL are never needed.
#
# Results go to $OUT (default build-gpu/out): tests.log, bench.txt, build.log, summary.txt;
# the loop stage's files (loop.txt, learning_log.csv, chart.svg, run.dump, ...).
# Exit status: 0 when every GPU test passed (a GPU test that skips on a GPU machine counts
# as failed: it means the build or the device is not what it should be) or the loop ran, 1
# otherwise.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-$BUILD/out}
mkdir -p "$OUT"
STEP_TIMEOUT=${STEP_TIMEOUT:-300}  # seconds for each test binary and the sanitizer run
# A stage's wall time, build included: one call of at most 10 minutes. The loop stage
# shortens its loop and stops its final match, the check stage starts no benchmark run
# after it, so that every file is written by then.
STAGE_SECONDS=${STAGE_SECONDS:-560}
run_tests=1 run_bench=1 quick= no_gpu= stage=check worker= profile=
usage() {
  echo "usage: $0 [--stage check|loop] [--tests-only | --bench-only] [--quick] [--no-gpu] [--profile] [--worker FILE]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case $1 in
    --stage) [ $# -ge 2 ] || usage; stage=$2; shift ;;
    --worker) [ $# -ge 2 ] || usage; worker=$2; shift ;;
    --tests-only) run_bench= ;;
    --bench-only) run_tests= ;;
    --quick) quick=--quick ;;
    --no-gpu) no_gpu=1 ;;
    --profile) profile=1 ;;
    *) usage ;;
  esac
  shift
done
case $stage in check | loop) ;; *) usage ;; esac
summary=()
note() { echo "gpu-check: $*"; summary+=("$*"); }
t_start=$SECONDS
stage_deadline=$(($(date +%s) + STAGE_SECONDS))
# The total and the summary (summary.txt and standard output), then the exit status $1.
finish() {
  note "total $((SECONDS - t_start)) s"
  printf '%s\n' "${summary[@]}" >"$OUT/summary.txt"
  echo "==== summary"
  cat "$OUT/summary.txt"
  exit "$1"
}

# ---- 1. the machine
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader >"$OUT/gpu.txt" 2>&1
else
  echo "nvidia-smi not found" >"$OUT/gpu.txt"
fi
cat "$OUT/gpu.txt"
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
extra_flags=()
if [ -n "$no_gpu" ]; then
  arch=${arch:-90}
  extra_flags=(-DPGMATE_PQXX=OFF)  # as on the bare image
  if [ "$stage" = loop ]; then
    note "dry run without a GPU: the loop runs on the CPU"
  else
    note "dry run without a GPU: GPU tests must skip, benchmarks must say why they cannot run"
  fi
elif [ -z "$arch" ]; then
  note "no GPU found by nvidia-smi (--no-gpu makes a dry run)"
  exit 1
fi
# The loop stage (scripts/gpu-loop.sh), with the worker given or built below.
run_loop() {
  local device=cuda
  [ -n "$no_gpu" ] && device=cpu
  note "the loop stage has until $STAGE_SECONDS s after the stage's start ($((stage_deadline - $(date +%s))) s left)"
  OUT=$OUT "$ROOT/scripts/gpu-loop.sh" "$1" "$device" $quick ${LOOP_SECONDS:+--seconds "$LOOP_SECONDS"} \
    --deadline "$stage_deadline"
  local status=$?
  [ $status -eq 0 ] && note "ok   the loop stage (loop.txt)" || note "FAIL the loop stage (loop.txt, server.log)"
  finish $status
}
if [ "$stage" = loop ] && [ -n "$worker" ]; then
  run_loop "$(readlink -f "$worker")"
fi
torch_version=none
if torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
  torch_version=$(python3 -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')
  extra_flags+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
elif [ -z "$no_gpu" ]; then
  note "python3 has no PyTorch: no CUDA LibTorch to build the worker against"
  exit 1
fi
nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc_path" ] || { note "no nvcc found"; exit 1; }
echo "LibTorch: $torch_version ${torch_prefix:-system LibTorch}; nvcc: $($nvcc_path --version | tail -1); sm_$arch" | tee -a "$OUT/gpu.txt"

# ---- 2. build for this GPU
gtest_args=()
if [ -d "$ROOT/.gpu-bundle/googletest" ]; then
  gtest_args=(-DPGMATE_GTEST_SOURCE="$ROOT/.gpu-bundle/googletest")
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
targets=()
[ "$stage" = loop ] && targets=(--target pgmate-worker)  # the rest of the loop comes built in the bundle
t0=$SECONDS
if ! { cmake -S . -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${extra_flags[@]}" \
         -DCMAKE_CUDA_COMPILER="$nvcc_path" -DCMAKE_CUDA_ARCHITECTURES="$arch" "${gtest_args[@]}" &&
       cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}"; } >"$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  note "build failed (build.log)"
  exit 1
fi
grep -E "^-- pgmate" "$OUT/build.log"
note "built in $((SECONDS - t0)) s for sm_$arch against LibTorch $torch_version"
bin=$BUILD/bin
[ "$stage" = loop ] && run_loop "$bin/pgmate-worker"

failed=0
# ---- 3. the GPU tests
if [ -n "$run_tests" ]; then
  : >"$OUT/tests.log"
  # One CUDA runtime in the worker: a static copy would export cuda* symbols that LibTorch's
  # calls could bind to.
  if exported=$(nm -D --defined-only "$bin/pgmate-worker" 2>/dev/null | grep -E ' cuda[A-Z]' | head -3) && [ -n "$exported" ]; then
    note "FAIL pgmate-worker exports CUDA runtime symbols: $exported"
    failed=1
  else
    note "ok   pgmate-worker exports no CUDA runtime symbols"
  fi
  gpu_test() {  # name, binary, gtest filter
    local name=$1 exe=$2 filter=${3:-*} t=$SECONDS
    if [ ! -x "$exe" ]; then
      note "FAIL $name: $exe was not built"; failed=1; return
    fi
    echo "==== $name" >>"$OUT/tests.log"
    # Bounded, so that a hung kernel still leaves the other results (124: timed out).
    timeout "$STEP_TIMEOUT" "$exe" --gtest_filter="$filter" --gtest_color=no >>"$OUT/tests.log" 2>&1
    local status=$?
    [ $status -eq 124 ] && echo "$name: timed out after $STEP_TIMEOUT s" >>"$OUT/tests.log"
    local counts
    counts=$(sed -n "/^==== $name\$/,\$p" "$OUT/tests.log" | grep -E '^\[ +(PASSED|FAILED|SKIPPED) +\] [0-9]+ test' | tr '\n' ' ')
    if [ $status -ne 0 ]; then
      note "FAIL $name ($((SECONDS - t)) s): $counts"; failed=1
    elif [ -n "$no_gpu" ]; then
      note "ok   $name ($((SECONDS - t)) s, no GPU): $counts"
    elif echo "$counts" | grep -q SKIPPED; then
      note "FAIL $name ($((SECONDS - t)) s): skipped on a GPU machine: $counts"; failed=1
    else
      note "ok   $name ($((SECONDS - t)) s): $counts"
    fi
  }
  gpu_test "CUDA perft, legal moves and encoding" "$bin/cuda_perft_test"
  gpu_test "network on CUDA against the CPU" "$bin/network_test" '*CudaNetwork*:TorchBackend.Devices'
  gpu_test "pgmate-worker serving the GPU" "$bin/worker_gpu_test"
  gpu_test "the optimizer's multi-tensor kernels on CUDA" "$bin/optimizer_test" '*Cuda*'
  gpu_test "training steps on CUDA against the CPU" "$bin/trainer_test" '*Cuda*'
  # What the GPU paths rest on, checked on the host: error classes, the breadth-first
  # driver with plain loops for kernels, the compact board's perft.
  for t in cuda_errors_test gpu_bfs_driver_perft_test compact_board_perft_test; do
    if "$bin/$t" --gtest_color=no >>"$OUT/tests.log" 2>&1; then note "ok   $t (host)"; else note "FAIL $t (host)"; failed=1; fi
  done
  # The review's regression cases under compute-sanitizer (out-of-bounds and misaligned
  # accesses, stack overflows), where the image has it.
  if [ -z "$no_gpu" ] && command -v compute-sanitizer >/dev/null; then
    if timeout "$STEP_TIMEOUT" compute-sanitizer --tool memcheck --error-exitcode 1 "$bin/cuda_perft_test" \
         --gtest_filter='CudaPerftBreadthFirst.ReviewRegressionCounts:CudaPerftPerThread.DeepThreadsDoNotOverflow' \
         >"$OUT/sanitizer.log" 2>&1; then
      note "ok   compute-sanitizer memcheck on the regression cases"
    else
      note "FAIL compute-sanitizer memcheck (sanitizer.log)"; failed=1
    fi
  fi
  grep -E '^\[  FAILED  \]|Failure|error' "$OUT/tests.log" | head -40
fi

# ---- 4. what bounds GPU perft (--profile)
if [ -n "$profile" ]; then
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
  if [ -n "$no_gpu" ]; then
    note "no perft profile: no GPU"
  elif [ -z "$ncu" ]; then
    note "no perft profile: ncu not found"
  elif timeout "$STEP_TIMEOUT" "$ncu" --clock-control none --kernel-name regex:'leaf_kernel' \
         --launch-skip 2 --launch-count 3 --section SpeedOfLight --section Occupancy --section LaunchStats \
         --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
         "$bin/gpu_perft_bench" --quick --cpu-seconds 0.1 >"$OUT/profile.txt" 2>&1; then
    note "ok   Nsight Compute on the perft kernels (profile.txt)"
  else
    note "the perft profile failed (profile.txt)"
  fi
fi

# ---- 5. the GPU benchmarks
if [ -n "$run_bench" ]; then
  t0=$SECONDS
  python3 bench/gpu_bench --bin "$bin" --out "$OUT/bench.txt" --deadline "$stage_deadline" $quick ||
    note "the benchmark script failed"
  note "benchmarks took $((SECONDS - t0)) s"
fi

finish $failed
