#!/usr/bin/env python3
"""Fits the scale of pgmate's score-to-WDL model (core/analysis/evaluation.h) to Stockfish's
own WDL output: Stockfish plays games from random openings (6 random plies, then its move at
`nodes`), and every position's reported score and WDL are kept. The model's midpoint stays at
+1.00 (Stockfish's normalisation); the scale with the least cross-entropy against Stockfish's
WDL is printed, with the mean absolute error of the win and loss chances.

usage: bench/analysis/wdl_fit.py [--games N] [--nodes N] [--stockfish PATH] [--seed S]"""
import argparse
import math
import random
import re
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--stockfish", default="/usr/games/stockfish")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    sf = subprocess.Popen([args.stockfish], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(line):
        sf.stdin.write(line + "\n")

    def until(prefix):
        lines = []
        while True:
            line = sf.stdout.readline()
            if not line:
                raise SystemExit("stockfish exited")
            lines.append(line.strip())
            if line.startswith(prefix):
                return lines

    send("uci"); until("uciok")
    send("setoption name UCI_ShowWDL value true"); send("setoption name Threads value 1")
    send("isready"); until("readyok")
    samples = []
    for g in range(args.games):
        moves = []
        send("ucinewgame")
        for ply in range(300):
            send("position startpos moves " + " ".join(moves))
            if ply < 6:
                send("go perft 1")
                legal = [l.split(":")[0] for l in until("Nodes searched") if re.match(r"^[a-h][1-8][a-h][1-8][qrbn]?:", l)]
                if not legal:
                    break
                moves.append(rng.choice(legal))
                continue
            send(f"go nodes {args.nodes}")
            out = until("bestmove")
            best = out[-1].split()[1]
            last = [l for l in out if " score " in l and " wdl " in l and "bound" not in l]
            if last:
                m = re.search(r"score (cp|mate) (-?\d+) .*wdl (\d+) (\d+) (\d+)", last[-1])
                if m and m.group(1) == "cp":
                    samples.append((int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))))
            if best == "(none)":
                break
            moves.append(best)
            if last and m and m.group(1) == "mate":
                break
    send("quit")

    def model(cp, scale):
        win = 1 / (1 + math.exp(-(cp - 100) / scale))
        loss = 1 / (1 + math.exp(-(-cp - 100) / scale))
        return win, max(1e-9, 1 - win - loss), loss

    def loss_of(scale):
        total = 0.0
        for cp, w, d, l in samples:
            pw, pd, pl = model(cp, scale)
            total -= (w * math.log(max(pw, 1e-9)) + d * math.log(pd) + l * math.log(max(pl, 1e-9))) / 1000
        return total / len(samples)

    best = min((loss_of(s / 2), s / 2) for s in range(20, 400))
    scale = best[1]
    mae_w = sum(abs(model(cp, scale)[0] - w / 1000) for cp, w, d, l in samples) / len(samples)
    mae_l = sum(abs(model(cp, scale)[2] - l / 1000) for cp, w, d, l in samples) / len(samples)
    print(f"{len(samples)} positions from {args.games} games at {args.nodes} nodes: scale {scale} "
          f"(cross-entropy {best[0]:.4f}); mean absolute error win {mae_w:.3f}, loss {mae_l:.3f}")


if __name__ == "__main__":
    main()
