#!/usr/bin/env bash
# The main job, for now: the chess core from the command line.
set -euo pipefail
pgmate=${1:-build/bin/pgmate}
root=$(cd "$(dirname "$0")/.." && pwd)
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

say pgmate moves startpos
"$pgmate" moves startpos | pr -t -5 -w 110

kiwipete="r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
say pgmate moves "\"$kiwipete\""
"$pgmate" moves "$kiwipete" | pr -t -5 -w 110

for depth in 1 2 3 4 5 6; do
  say pgmate perft --stats startpos $depth
  "$pgmate" perft --stats startpos $depth
done

say pgmate perft --divide "\"$kiwipete\"" 3
"$pgmate" perft --divide "$kiwipete" 3 | pr -t -5 -w 110

say pgmate perft --epd tests/data/perftsuite.epd --max-depth 4
"$pgmate" perft --epd "$root/tests/data/perftsuite.epd" --max-depth 4

say "pgmate moves \"8/8/8/8/8/8/8/8 w - - 0 1\"   # bad input: a clear error, exit 2"
"$pgmate" moves "8/8/8/8/8/8/8/8 w - - 0 1" || echo "(exit code $?)"
