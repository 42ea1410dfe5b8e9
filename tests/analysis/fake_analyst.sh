#!/bin/sh
# UCI engines that misbehave while analysing, for the analysis tests:
#   dieonce FILE   the first start (FILE absent: it is made) names itself as Stockfish does and
#                  dies at go; later starts are Stockfish
#   badscore       a believable handshake, then "score mate 0" with a legal PV at every go
#   badwdl         a WDL that does not sum to 1000
#   noscore        a best move with no scored line before it
#   multipvdup     a MultiPV option, then lines 1 and 2 with the same move at every go
#   hangmost       answers go at the start position only; elsewhere never
mode=$1
name="fake-$mode"
if [ "$mode" = dieonce ]; then
  [ -e "$2" ] && exec /usr/games/stockfish
  : >"$2"
  name=$(printf 'uci\nquit\n' | /usr/games/stockfish | sed -n 's/^id name //p')
fi
while read -r line; do
  case "$line" in
    uci)
      echo "id name $name"
      [ "$mode" = multipvdup ] && echo "option name MultiPV type spin default 1 min 1 max 500"
      echo uciok ;;
    isready) echo readyok ;;
    "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1") at_start=1 ;;
    position*) at_start= ;;
    go*)
      case $mode in
        dieonce) exit 3 ;;
        badscore) echo "info depth 1 score mate 0 nodes 1 pv e2e4"; echo "bestmove e2e4" ;;
        badwdl) echo "info depth 1 score cp 10 wdl 500 500 500 nodes 1 pv e2e4"; echo "bestmove e2e4" ;;
        noscore) echo "info depth 1 nodes 1 pv e2e4"; echo "bestmove e2e4" ;;
        multipvdup)
          echo "info depth 1 multipv 1 score cp 30 nodes 1 pv e2e4"
          echo "info depth 1 multipv 2 score cp 20 nodes 1 pv e2e4"
          echo "bestmove e2e4" ;;
        hangmost)
          [ -n "$at_start" ] && { echo "info depth 1 score cp 30 nodes 1 pv e2e4"; echo "bestmove e2e4"; } ;;
      esac ;;
    quit) exit 0 ;;
  esac
done
