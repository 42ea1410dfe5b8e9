#!/usr/bin/env python3
"""pgmate analyse against Stockfish's own loop, in the same run.

Generates GAMES games (pgmate generate: varied openings, so positions repeat across games as
in a real database), imports them into a database of the project's server, and evaluates
their distinct positions twice at the same fixed nodes with JOBS engines:

  peer     one Stockfish process per job, fed "ucinewgame / isready / position fen ... / go
           nodes N" and read to its bestmove, in a loop (each position from a fresh engine
           state, as pgmate's; no database, nothing stored, nothing parsed but bestmove);
  pgmate   pgmate analyse --jobs JOBS --nodes N (positions planned by the database, every
           info line parsed and checked, evaluations stored as they come).

Prints positions/s per job of each and their ratio (target >= 0.9), and the share of the
games' positions that transpositions saved (positions in the games against distinct ones).

usage: bench/analysis/analysis_bench.py [--games N] [--nodes N] [--jobs J] [--db NAME] [--pgmate PATH]
The server must be running (scripts/pg-server.sh start; eval "$(scripts/pg-server.sh env)").
"""
import argparse
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STOCKFISH = "/usr/games/stockfish"


def psql(db, sql):
    out = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("analysis_bench: psql: " + out.stderr.strip())
    return out.stdout.strip()


def stockfish_loop(fens, nodes, hash_mb, result, index):
    sf = subprocess.Popen([STOCKFISH], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(line):
        sf.stdin.write(line + "\n")
        sf.stdin.flush()

    def until(prefix):
        while True:
            line = sf.stdout.readline()
            if not line:
                raise SystemExit("stockfish exited")
            if line.startswith(prefix):
                return line

    send("uci")
    until("uciok")
    for name, value in (("Threads", "1"), ("Hash", str(hash_mb)), ("UCI_ShowWDL", "true")):
        send("setoption name %s value %s" % (name, value))
    send("isready")
    until("readyok")
    t0 = time.monotonic()
    for fen in fens:
        # each position from a fresh engine state, as pgmate analyse evaluates it
        send("ucinewgame")
        send("isready")
        until("readyok")
        send("position fen " + fen)
        send("go nodes %d" % nodes)
        until("bestmove")
    result[index] = time.monotonic() - t0
    send("quit")
    sf.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--db", default="pgmate_bench_analysis")
    ap.add_argument("--pgmate", default=os.path.join(ROOT, "build", "bin", "pgmate"))
    args = ap.parse_args()

    subprocess.run(["dropdb", "--if-exists", args.db], check=True, capture_output=True)
    subprocess.run(["createdb", args.db], check=True)
    psql(args.db, "CREATE EXTENSION pgmate")
    pgn = "/tmp/pgmate_analysis_bench_%d.pgn" % os.getpid()
    subprocess.run([args.pgmate, "generate", "--games", str(args.games), "--seed", str(args.seed), "--out", pgn],
                   check=True, capture_output=True)
    subprocess.run([args.pgmate, "import", "--db", "dbname=" + args.db, pgn], check=True, capture_output=True)
    os.unlink(pgn)
    total, distinct = psql(args.db, """
        SELECT count(*), count(DISTINCT (board_key(p.board), without_clocks(p.board)))
        FROM pgmate.games g, game_positions(g.start, g.moves) p""").split("|")
    total, distinct = int(total), int(distinct)
    # Positions with moves only: both sides skip the others (pgmate needs no engine for them).
    fens = psql(args.db, """
        SELECT DISTINCT ON (board_key(p.board), without_clocks(p.board)) p.board::text
        FROM pgmate.games g, game_positions(g.start, g.moves) p
        WHERE status(p.board) = 'ongoing'
        ORDER BY board_key(p.board), without_clocks(p.board), g.id, p.ply""").splitlines()

    print("%d games: %d positions, %d distinct (%.1f%% saved by transpositions); %d with moves, "
          "Stockfish at %d nodes, %d jobs" % (args.games, total, distinct, 100.0 * (total - distinct) / total,
                                              len(fens), args.nodes, args.jobs))

    # The peer: each job its share of the positions.
    shares = [fens[i::args.jobs] for i in range(args.jobs)]
    seconds = [0.0] * args.jobs
    threads = [threading.Thread(target=stockfish_loop, args=(shares[i], args.nodes, 16, seconds, i))
               for i in range(args.jobs)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    peer_wall = time.monotonic() - t0
    peer_rate = len(fens) / peer_wall / args.jobs

    t0 = time.monotonic()
    out = subprocess.run([args.pgmate, "analyse", "--db", "dbname=" + args.db, "--engine", "uci:" + STOCKFISH,
                          "--nodes", str(args.nodes), "--jobs", str(args.jobs)], capture_output=True, text=True)
    pgmate_wall = time.monotonic() - t0
    if out.returncode != 0:
        sys.exit("analysis_bench: pgmate analyse failed: " + out.stderr.strip())
    stored = int(psql(args.db, "SELECT count(*) FROM pgmate.position_evals WHERE limits = 'nodes=%d'" % args.nodes))
    pgmate_rate = len(fens) / pgmate_wall / args.jobs

    print("peer (Stockfish's own loop):  %7.1f positions/s per job (%.1f s)" % (peer_rate, peer_wall))
    print("pgmate analyse (stored):      %7.1f positions/s per job (%.1f s, %d evaluations stored, "
          "the command's whole run: planning, saving)" % (pgmate_rate, pgmate_wall, stored))
    print("ratio pgmate / peer: %.3f (target >= 0.9)" % (pgmate_rate / peer_rate))
    subprocess.run(["dropdb", args.db], check=True)


if __name__ == "__main__":
    main()
