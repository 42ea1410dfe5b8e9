#!/bin/sh
# A misbehaving UCI engine for the arena tests: legal handshake, then per MODE
#   illegal  answers every go with an illegal move
#   hang     never answers go
#   die      exits when asked to move
#   mute     never finishes the handshake
mode=$1
while read -r line; do
  case "$line" in
    uci) [ "$mode" = mute ] || { echo "id name fake-$mode"; echo uciok; } ;;
    isready) echo readyok ;;
    go*)
      case $mode in
        illegal) echo "bestmove e2e5" ;;
        die) exit 3 ;;
      esac ;;
    quit) exit 0 ;;
  esac
done
