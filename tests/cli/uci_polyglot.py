#!/usr/bin/env python3
"""pgmate uci driven by real clients.

1. Debian's polyglot adapter turns two `pgmate uci --pure-mcts` engines into xboard
   engines; this script relays their moves through a whole game (to mate, a draw or 80
   plies), as an xboard GUI would.
2. pgmate's own arena plays `uci:PGMATE uci --pure-mcts` against Stockfish.
3. Scripted UCI: isready while thinking, go infinite + stop, a bad position answered with
   an info string, the tree kept between moves, the input ending during a search.
Usage: uci_polyglot.py PGMATE
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

pgmate = os.path.abspath(sys.argv[1])
polyglot = shutil.which("polyglot") or "/usr/games/polyglot"
stockfish = "/usr/games/stockfish"
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


class XboardEngine:
    def __init__(self, workdir, name):
        ini = os.path.join(workdir, name + ".ini")
        with open(ini, "w") as f:
            f.write("[PolyGlot]\nEngineCommand = %s uci --pure-mcts\nEngineDir = %s\nLog = false\n"
                    "[Engine]\nSimulations = 60\n" % (pgmate, workdir))
        self.p = subprocess.Popen([polyglot, ini], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("xboard")
        self.send("protover 2")
        self.features = self.read_until(lambda l: "done=1" in l, 20)

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def read_until(self, pred, timeout):
        lines = []
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.p.stdout.readline()
            if not line:
                break
            line = line.strip()
            lines.append(line)
            if pred(line):
                return lines
        raise RuntimeError("no answer from polyglot; read: %s" % lines[-5:])

    def move(self, timeout=30):
        """The engine's next move, or a result line."""
        for line in self.read_until(lambda l: l.startswith("move ") or re.match(r"^(1-0|0-1|1/2-1/2)", l), timeout)[::-1]:
            if line.startswith("move "):
                return line.split()[1]
            if re.match(r"^(1-0|0-1|1/2-1/2)", line):
                return line
        return None

    def close(self):
        try:
            self.send("quit")
            self.p.wait(5)
        except Exception:
            self.p.kill()


def xboard_game():
    with tempfile.TemporaryDirectory() as d:
        white, black = XboardEngine(d, "white"), XboardEngine(d, "black")
        usermove = [("usermove=1" in " ".join(e.features)) for e in (white, black)]
        check(any("myname" in l for l in white.features), "polyglot reports pgmate's features")
        for e in (white, black):
            e.send("new")
        black.send("force")
        # As a GUI does before each move: the clocks, in centiseconds (3 s each: about
        # 100 ms a move), which polyglot passes on as wtime/btime.
        clocks = lambda e: (e.send("time 300"), e.send("otim 300"))
        clocks(white)
        white.send("go")
        moves, result = [], None
        engines = [white, black]
        side = 0
        try:
            while len(moves) < 80:
                reply = engines[side].move()
                if reply is None or re.match(r"^(1-0|0-1|1/2-1/2)", reply):
                    result = reply
                    break
                moves.append(reply)
                other = engines[1 - side]
                clocks(other)
                other.send(("usermove " if usermove[1 - side] else "") + reply)
                if len(moves) == 1:
                    black.send("go")  # black plays on from here
                side = 1 - side
        finally:
            for e in engines:
                e.close()
        check(len(moves) >= 20 or result is not None,
              "a game through polyglot: %d plies%s" % (len(moves), ", " + result if result else ""))
        check(all(re.match(r"^[a-h][1-8][a-h][1-8][qrbn]?$|^O-O(-O)?$", m) for m in moves), "every move in xboard notation")


def arena_against_stockfish():
    spec = "uci:%s uci --pure-mcts:nodes=200" % pgmate
    out = subprocess.run([pgmate, "arena", "--pgn", "/dev/null", "--games", "2", "--parallel", "2", "--seed", "1",
                          "--max-plies", "200", spec, "uci:%s:nodes=500" % stockfish],
                         capture_output=True, text=True, timeout=300)
    check(out.returncode == 0 and "W/D/L" in out.stdout, "pgmate arena: pgmate uci against Stockfish: " +
          (out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()))
    check("forfeit" not in out.stdout, "no forfeit by pgmate uci")


def scripted():
    p = subprocess.Popen([pgmate, "uci", "--pure-mcts"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1)

    def send(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()

    def until(prefix, timeout=20):
        deadline, seen = time.time() + timeout, []
        while time.time() < deadline:
            line = p.stdout.readline().strip()
            seen.append(line)
            if line.startswith(prefix):
                return line, seen
        raise RuntimeError("no %r; read %s" % (prefix, seen[-5:]))

    send("uci")
    until("uciok")
    send("position startpos moves e2e4 e7e5")
    send("go infinite")
    time.sleep(0.3)
    send("isready")
    line, _ = until("readyok")
    check(line == "readyok", "isready answered while thinking")
    t0 = time.time()
    send("stop")
    best, seen = until("bestmove")
    check(time.time() - t0 < 2 and re.match(r"^bestmove [a-h][1-8][a-h][1-8]", best) is not None,
          "go infinite stops on stop: " + best)
    check(any(l.startswith("info nodes") and " score cp " in l and " pv " in l for l in seen), "info lines")
    send("position startpos moves e2e4 e7e5 g1f3")
    t0 = time.time()
    send("go movetime 300")
    best, _ = until("bestmove")
    check(0.2 < time.time() - t0 < 1.5, "go movetime 300 took %.2f s" % (time.time() - t0))
    send("position fen not-a-fen")
    line, _ = until("info string error")
    check("error" in line, "a bad position is answered, not a crash")
    send("position startpos moves e2e4 e7e5 e1e3")
    line, _ = until("info string error")
    check("e1e3" in line, "an illegal move is named: " + line)
    send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")  # stalemate
    send("go nodes 10")
    best, _ = until("bestmove")
    check(best == "bestmove 0000", "no legal move: bestmove 0000")
    send("quit")
    check(p.wait(5) == 0, "quit ends the engine")
    # The input ends right after a go: the engine still answers with a move and exits.
    out = subprocess.run([pgmate, "uci", "--pure-mcts"], input="position startpos\ngo nodes 100\n",
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and re.search(r"^bestmove [a-h][1-8][a-h][1-8]", out.stdout, re.M) is not None,
          "the input ending during a go: a move, then exit 0 (%d, %s)" % (out.returncode, out.stderr.strip()[:80]))


if not os.path.exists(polyglot):
    print("polyglot is not installed (apt-get install polyglot): the xboard game is skipped")
else:
    xboard_game()
if os.path.exists(stockfish):
    arena_against_stockfish()
scripted()
sys.exit(1 if failures else 0)
