#!/usr/bin/env bash
# Installs every Debian package pgmate needs. Idempotent: safe to run again.
# CUDA (nvcc) is not installed here: it is detected at /usr/local/cuda/bin when present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git python3
  xz-utils                          # packs the GPU bundle (make gpu-bundle)
  clang libclang-rt-14-dev          # libFuzzer targets and sanitizers
  postgresql-15 postgresql-server-dev-15 postgresql-common libpqxx-dev
  libpq-dev                         # pgmate import's binary COPY calls libpq itself
  libzstd-dev zlib1g-dev libbz2-dev zstd bzip2  # pgmate import reads .pgn.zst/.gz/.bz2 (and its test writes them)
  libgtest-dev libgmock-dev libbenchmark-dev
  stockfish                         # perft oracle, speed peer and arena opponent (/usr/games/stockfish)
  polyglot                          # UCI-to-xboard adapter: drives pgmate uci in a test
  gnuchess-book                     # a real Polyglot book: the key tests read it
  pgn-extract                       # eco.pgn: named opening lines
  postgresql-15-cron                # pg_cron: the learning loop as a scheduled job (its test)
  postgresql-15-plpgsql-check       # checks every PL/pgSQL body of the extension (tests/cli/search_path.sh)
  postgresql-15-plproxy             # pgmate_cluster runs each search on every shard (scripts/shards.sh)
)
# Without recommends: LibTorch, OpenBLAS for fast CPU maths, and headless Chromium, which
# opens the learning report in a test.
torch_packages=(libtorch-dev libopenblas0-pthread chromium)

missing=()
for p in "${packages[@]}" "${torch_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q "${packages[@]}"
$SUDO apt-get install -y -q --no-install-recommends "${torch_packages[@]}"
