#!/bin/sh
# A misbehaving UCI engine for the arena tests: legal handshake, then per MODE
#   illegal    answers every go with an illegal move
#   hang       never answers go
#   die        exits when asked to move
#   mute       never finishes the handshake
#   hsflood    floods "id name" lines at once, never uciok
#   slowflood  an "id name" line every 50 ms, never uciok
#   flood      floods info lines after go, never a bestmove
#   deaf       stops reading after uciok
#   deafmove   stops reading after the handshake
#   stuck      stops reading when asked to move
#   wrapper    a script that starts a helper (sleep) and stays in between, stuck at go
#   fds [FILE] at go, lists its open descriptors ("info string fd N TARGET", also appended
#              to FILE when given), then a bestmove
#   badname    an "id name" that is not UTF-8, and dies when asked to move
#   badmove    a bestmove that is not UTF-8
#   setsid FILE  a child starts a grandchild in a session of its own (setsid, then sleep 300;
#              its pid written to FILE) and exits; never answers go
mode=$1
out=${2:-}
[ "$mode" = hsflood ] && exec yes "id name flood"
if [ "$mode" = slowflood ]; then
  while :; do echo "id name slow"; sleep 0.05; done
fi
if [ "$mode" = wrapper ]; then sleep 300 & fi
if [ "$mode" = setsid ]; then
  ( setsid sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1" && exec sleep 300' sh "$out" </dev/null >/dev/null & )
fi
while read -r line; do
  case "$line" in
    uci)
      [ "$mode" = mute ] && continue
      if [ "$mode" = badname ]; then printf 'id name Evil\377\376Engine\n'; else echo "id name fake-$mode"; fi
      echo uciok
      [ "$mode" = deaf ] && exec sleep 300 ;;
    isready)
      echo readyok
      [ "$mode" = deafmove ] && exec sleep 300 ;;
    go*)
      case $mode in
        illegal) echo "bestmove e2e5" ;;
        die|badname) exit 3 ;;
        flood) exec yes "info depth 1 score cp 0 nodes 1" ;;
        stuck|wrapper) sleep 300 ;;
        fds)
          for f in /proc/$$/fd/*; do
            fd="info string fd ${f##*/} $(readlink "$f")"
            echo "$fd"
            [ -n "$out" ] && echo "$fd" >>"$out"
          done
          echo "bestmove 0000" ;;
        badmove) printf 'bestmove \377\376\n' ;;
      esac ;;
    quit) exit 0 ;;
  esac
done
