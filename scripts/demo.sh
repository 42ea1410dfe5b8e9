#!/usr/bin/env bash
# The main job: chess move generation from the command line and inside PostgreSQL, and
# self-play stored as rows. Starts the project's own server (left running), installs the
# extension into database `pgmate`, loads the ECO openings, tours the SQL surface, plays
# a few quick self-play games (client and procedure), analyses famous games with Stockfish
# (their blunders and each side's accuracy) and runs the analysis queries.
set -euo pipefail
pgmate=${1:-build/bin/pgmate}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
sql() {
  printf '\n\033[1mpgmate=# %s\033[0m\n' "$1"
  psql -X -q -d pgmate -c "$1"
}

echo "== the command line =="
say pgmate moves startpos
"$pgmate" moves startpos | pr -t -5 -w 110
for depth in 4 5 6; do
  say pgmate perft --stats startpos $depth
  "$pgmate" perft --stats startpos $depth
done
kiwipete="r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
say pgmate perft --divide "\"$kiwipete\"" 2
"$pgmate" perft --divide "$kiwipete" 2 | pr -t -6 -w 110
say pgmate perft --epd tests/data/perftsuite.epd --max-depth 4
"$pgmate" perft --epd tests/data/perftsuite.epd --max-depth 4
say "pgmate moves \"8/8/8/8/8/8/8/8 w - - 0 1\"   # bad input: a clear error, exit 2"
"$pgmate" moves "8/8/8/8/8/8/8/8 w - - 0 1" || echo "(exit code $?)"

echo
echo "== inside PostgreSQL =="
make -s all >/dev/null
make -s install >/dev/null
scripts/pg-server.sh start
eval "$(scripts/pg-server.sh env)"
psql -X -q -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'pgmate'" | grep -q 1 || createdb pgmate
# Existing games in the demo database are kept.
psql -X -q -d pgmate -c "CREATE EXTENSION IF NOT EXISTS pgmate" -c "ALTER EXTENSION pgmate UPDATE"

if [ -f /usr/share/pgn-extract/eco.pgn ]; then
  say pgmate import --openings
  "$pgmate" import --openings --db "dbname=pgmate"
fi

sql "SELECT board_diagram(play('startpos', '{e2e4,e7e5,g1f3,b8c6,f1b5}'::move[]));"
sql "SELECT uci, san, piece, captured, is_check FROM legal_moves('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1') WHERE captured IS NOT NULL OR san LIKE 'O-%';"
sql "SELECT piece, count(*) AS moves FROM move_table() GROUP BY piece ORDER BY piece;"
sql "SELECT perft('startpos', 5) AS nodes;"
sql "SELECT * FROM perft_divide('r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1', 3) ORDER BY nodes DESC LIMIT 5;"
sql "SELECT pgmate.import_pgn(\$\$[Event \"Immortal Game\"] [White \"Anderssen\"] [Black \"Kieseritzky\"] [Result \"1-0\"]
1. e4 e5 2. f4 exf4 3. Bc4 Qh4+ 4. Kf1 b5 5. Bxb5 Nf6 6. Nf3 Qh6 7. d3 Nh5 8. Nh4 Qg5 9. Nf5 c6
10. g4 Nf6 11. Rg1 cxb5 12. h4 Qg6 13. h5 Qg5 14. Qf3 Ng8 15. Bxf4 Qf6 16. Nc3 Bc5 17. Nd5 Qxb2
18. Bd6 Bxg1 19. e5 Qxa1+ 20. Ke2 Na6 21. Nxg7+ Kd8 22. Qf6+ Nxf6 23. Be7# 1-0\$\$) AS imported
     WHERE NOT EXISTS (SELECT FROM pgmate.games WHERE event = 'Immortal Game');"
sql "SELECT g.id, g.white, g.black, g.result, g.ply_count, o.eco, o.name FROM pgmate.games g, LATERAL opening(g.start, g.moves) o;"
sql "SELECT g.id, g.white, p.ply, p.san FROM pgmate.games g, LATERAL game_positions(g.start, g.moves) p WHERE p.ply >= 40;"
sql "SELECT id, white, black FROM pgmate.games WHERE game_keys(start, moves) @> ARRAY[board_key('rnbqkbnr/pppp1ppp/8/8/4Pp2/8/PPPP2PP/RNBQKBNR w KQkq - 0 3')];"
sql "SELECT status(b), in_check(b), b FROM (SELECT play('startpos', '{f2f3,e7e5,g2g4,d8h4}'::move[]) AS b) s;"

echo
echo "== engine analysis: blunders and accuracy of famous games =="
sql "SELECT pgmate.import_pgn(\$\$[Event \"Opera Game\"] [Site \"Paris\"] [Date \"1858.??.??\"] [White \"Morphy, Paul\"] [Black \"Duke Karl / Count Isouard\"] [Result \"1-0\"]
1. e4 e5 2. Nf3 d6 3. d4 Bg4 4. dxe5 Bxf3 5. Qxf3 dxe5 6. Bc4 Nf6 7. Qb3 Qe7 8. Nc3 c6 9. Bg5 b5 10. Nxb5 cxb5
11. Bxb5+ Nbd7 12. O-O-O Rd8 13. Rxd7 Rxd7 14. Rd1 Qe6 15. Bxd7+ Nxd7 16. Qb8+ Nxb8 17. Rd8# 1-0

[Event \"Evergreen Game\"] [Site \"Berlin\"] [Date \"1852.??.??\"] [White \"Anderssen, Adolf\"] [Black \"Dufresne, Jean\"] [Result \"1-0\"]
1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. b4 Bxb4 5. c3 Ba5 6. d4 exd4 7. O-O d3 8. Qb3 Qf6 9. e5 Qg6 10. Re1 Nge7
11. Ba3 b5 12. Qxb5 Rb8 13. Qa4 Bb6 14. Nbd2 Bb7 15. Ne4 Qf5 16. Bxd3 Qh5 17. Nf6+ gxf6 18. exf6 Rg8
19. Rad1 Qxf3 20. Rxe7+ Nxe7 21. Qxd7+ Kxd7 22. Bf5+ Ke8 23. Bd7+ Kf8 24. Bxe7# 1-0\$\$) AS imported
     WHERE NOT EXISTS (SELECT FROM pgmate.games WHERE event = 'Opera Game');"
if [ -x /usr/games/stockfish ]; then
  games="SELECT id FROM pgmate.games WHERE event IN ('Immortal Game', 'Opera Game', 'Evergreen Game')"
  say "pgmate analyse --where \"event IN ('Immortal Game', 'Opera Game', 'Evergreen Game')\" --engine uci:/usr/games/stockfish --nodes 100000 --jobs 2"
  "$pgmate" analyse --db "dbname=pgmate" --where "event IN ('Immortal Game', 'Opera Game', 'Evergreen Game')" \
    --engine uci:/usr/games/stockfish --nodes 100000 --jobs 2
  sql "SELECT g.event, m.ply, m.side, m.san, m.class, m.best_san AS engine_move, m.cp_before, m.cp_after, round(m.accuracy::numeric) AS accuracy FROM pgmate.move_evals m JOIN pgmate.games g ON g.id = m.game WHERE g.event = 'Immortal Game' AND m.limits = 'nodes=100000' ORDER BY m.chances_lost DESC LIMIT 5;"
  sql "SELECT g.event, a.side, CASE a.side WHEN 'white' THEN g.white ELSE g.black END AS player, round(a.accuracy::numeric, 1) AS accuracy, round(a.acpl::numeric) AS acpl, a.inaccuracies, a.mistakes, a.blunders FROM pgmate.game_accuracy a JOIN pgmate.games g ON g.id = a.game WHERE a.limits = 'nodes=100000' AND g.event IN ('Immortal Game', 'Opera Game', 'Evergreen Game') ORDER BY g.event, a.side DESC;"
  sql "CALL pgmate.analyse('SELECT id FROM pgmate.games WHERE event = ''Opera Game''', '\"uci:/usr/games/stockfish\"', '{\"nodes\": 100000}');   -- in SQL: nothing new to evaluate"
  say "pgmate export --evals --where \"event = 'Opera Game'\"   # PGN with [%eval] comments, as lichess writes it"
  "$pgmate" export --db "dbname=pgmate" --evals --engine "Stockfish 15.1" --limits nodes=100000 --where "event = 'Opera Game'"
else
  echo "(Stockfish missing: the analysis is skipped)"
fi

echo
echo "== American checkers =="
say "pgmate perft --game checkers --stats startpos 10"
"$pgmate" perft --game checkers --stats startpos 10
sql "SELECT board_diagram(play('startpos'::checkers_board, '{11-15,23-19,8-11,22-17}'::checkers_move[]));"
sql "SELECT move, notation, captures, crowns FROM legal_moves('W:W18,K27:B14,15,23'::checkers_board);"
sql "SELECT depth, perft('startpos'::checkers_board, depth) AS nodes FROM generate_series(1, 9) depth;"

echo
echo "== self-play =="
say "pgmate selfplay --games 4 --parallel 4 --simulations 48 --max-plies 120 --seed 1 --run demo   # pure MCTS"
"$pgmate" selfplay --db "dbname=pgmate" --games 4 --parallel 4 --simulations 48 --max-plies 120 --seed 1 --run demo
if [ "$(psql -X -q -A -t -d pgmate -c "SELECT pgmate.wait_for_worker('20 s')")" = t ]; then
  # A small random network, so the worker's evaluations are quick on a CPU.
  # (A row from pgmate 0.3 holds a LibTorch archive, which is never loaded: make a new one.)
  net=$(psql -X -q -A -t -d pgmate -c "SELECT coalesce((SELECT min(id) FROM pgmate.networks WHERE name = 'demo-small'
             AND substring(weights FROM 1 FOR 4) <> '\\x504b0304'::bytea),
           pgmate.init_network('demo-small', '{\"filters\": 32, \"blocks\": 2, \"attention_blocks\": 0}', seed => 1))")
  say "pgmate selfplay --games 2 --parallel 2 --simulations 16 --max-plies 40 --network $net --run demo-network"
  "$pgmate" selfplay --db "dbname=pgmate" --games 2 --parallel 2 --simulations 16 --max-plies 40 --network "$net" \
    --run demo-network --quiet
  sql "SELECT idx, round(win::numeric, 3) AS win, round(draw::numeric, 3) AS draw, round(loss::numeric, 3) AS loss, network_id, encode(substring(weights_sha256 FROM 1 FOR 8), 'hex') AS weights FROM evaluate(ARRAY['startpos'::board, play('startpos', 'e2e4')], $net);"
  sql "SELECT n->>'id' AS id, n->'config' AS config, n->>'bytes' AS bytes FROM jsonb_array_elements(worker_status()->'networks') n;"
else
  echo "(pgmate-worker is not answering: the network self-play is skipped)"
fi
sql "CALL pgmate.selfplay(games => 2, simulations => 48, parallel => 2, options => '{\"seed\": 2, \"max_plies\": 120, \"run\": \"demo-sql\"}');"
sql "SELECT * FROM pgmate.selfplay_results;"
sql "SELECT * FROM pgmate.selfplay_lengths(20);"
sql "SELECT * FROM pgmate.selfplay_first_moves ORDER BY games DESC, first_move;"
sql "SELECT game_id, ply, disagreement, prior_move, prior_share, search_move, visit_share FROM pgmate.selfplay_surprises WHERE network_id IS NOT NULL LIMIT 5;"
sql "SELECT game_id, ply, wdl, z, cardinality(history) AS history, repetitions, round(q::numeric, 3) AS q, policy[1:5] AS policy_first_5 FROM pgmate.training_targets ORDER BY game_id DESC, ply LIMIT 5;"

echo
echo "== arena: who is stronger, with error bars =="
say "pgmate arena --games 8 --parallel 8 --seed 1 --max-plies 200 --name demo-mcts mcts:100 random"
"$pgmate" arena --db "dbname=pgmate" --games 8 --parallel 8 --seed 1 --max-plies 200 --name demo-mcts --quiet \
  mcts:100 random
if [ -x /usr/games/stockfish ]; then
  say "pgmate arena --games 4 --seed 1 --name demo-stockfish 'uci:/usr/games/stockfish:nodes=1000,Skill Level=0' mcts:100"
  "$pgmate" arena --db "dbname=pgmate" --games 4 --parallel 4 --seed 1 --max-plies 300 --name demo-stockfish --quiet \
    "uci:/usr/games/stockfish:nodes=1000,Skill Level=0" mcts:100
fi
if [ -x /usr/games/stockfish ] && [ "$(psql -X -q -A -t -d pgmate -c "SELECT pgmate.wait_for_worker('20 s')")" = t ] &&
   psql -X -q -A -t -d pgmate -c "SELECT pgmate.install_network('default')" >/dev/null 2>&1; then
  shipped=$(psql -X -q -A -t -d pgmate -c "SELECT pgmate.install_network('default')")
  sql "SELECT pgmate.install_network('default') AS id, name, config FROM pgmate.networks WHERE id = $shipped;   -- the network pgmate ships"
  say "pgmate arena --games 10 --openings eco 'net:$shipped:64' 'uci:/usr/games/stockfish:nodes=1000,Skill Level=0'"
  "$pgmate" arena --db "dbname=pgmate" --games 10 --parallel 2 --openings eco --seed 1 --max-plies 300 \
    --name demo-shipped --quiet "net:$shipped:64" "uci:/usr/games/stockfish:nodes=1000,Skill Level=0"
fi
sql "CALL pgmate.arena('\"mcts:20\"', '\"random\"', 4, '{\"name\": \"demo-sql\", \"seed\": 1, \"max_plies\": 120}');"
sql "SELECT name, games, wins, draws, losses, round(score::numeric, 3) AS score, round(elo::numeric) AS elo, round(elo_lower::numeric) AS elo_lower, round(elo_upper::numeric) AS elo_upper FROM pgmate.match_results ORDER BY match_id;"
sql "SELECT name, round(elo::numeric) AS elo, round(elo_stderr::numeric) AS stderr, games FROM pgmate.ratings('\"random\"') ORDER BY elo DESC NULLS LAST;"

echo
echo "== learning: a tiny network trained on Stockfish games, on the worker =="
if [ -x /usr/games/stockfish ] && [ "$(psql -X -q -A -t -d pgmate -c "SELECT pgmate.wait_for_worker('20 s')")" = t ]; then
  say "pgmate arena --games 160 --openings eco --name demo-corpus 'uci:/usr/games/stockfish:nodes=500' (x2)   # a corpus"
  "$pgmate" arena --db "dbname=pgmate" --games 160 --parallel 2 --openings eco --max-plies 200 --name demo-corpus \
    --quiet uci:/usr/games/stockfish:nodes=500 uci:/usr/games/stockfish:nodes=500
  corpus="FROM pgmate.game_targets WHERE game_id IN (SELECT g.id FROM pgmate.games g JOIN pgmate.matches m ON m.id = g.match_id WHERE m.name = 'demo-corpus')"
  train="SELECT board, history, repetitions, played, z $corpus AND hashint8(game_id) % 10 <> 0"
  holdout="SELECT board, history, repetitions, played, z $corpus AND hashint8(game_id) % 10 = 0"
  tiny=$(psql -X -q -A -t -d pgmate -c "SELECT pgmate.init_network('demo-tiny', '{\"preset\": \"tiny\"}', seed => 1)")
  sql "SELECT positions, round(100 * top1::numeric, 1) AS top1_percent, round(policy_cross_entropy::numeric, 3) AS policy_ce FROM pgmate.network_accuracy($tiny, '${holdout//\'/\'\'}');   -- before: random"
  say "pgmate train --network $tiny --steps 400 --batch 128 --lr 0.003 --option optimizer=adamw --holdout ... --data ..."
  "$pgmate" train --db "dbname=pgmate" --network "$tiny" --data "$train" --holdout "$holdout" --steps 400 --batch 128 \
    --lr 0.003 --option optimizer=adamw --option schedule=cosine --option warmup_steps=20 --option log_every=50 \
    --option checkpoint_every=200 --name demo-tiny-trained | tee "$root/build/demo-train.log"
  trained=$(tail -n 1 "$root/build/demo-train.log")
  sql "SELECT positions, round(100 * top1::numeric, 1) AS top1_percent, round(policy_cross_entropy::numeric, 3) AS policy_ce FROM pgmate.network_accuracy($trained, '${holdout//\'/\'\'}');   -- after: games it never saw"
  sql "SELECT step, samples, round(policy_loss::numeric, 3) AS policy_loss, round(100 * accuracy::numeric, 1) AS accuracy, round(100 * holdout_top1::numeric, 1) AS holdout_top1, round(samples_per_s::numeric) AS samples_per_s FROM pgmate.training_log WHERE network = $trained ORDER BY step;"
  say "pgmate arena --games 10 --openings eco net:$trained:32 mcts:32"
  "$pgmate" arena --db "dbname=pgmate" --games 10 --parallel 2 --openings eco --max-plies 200 --seed 1 \
    --name "demo-trained-$trained" --quiet "net:$trained:32" mcts:32
  psql -X -q -A -t -d pgmate -c "SELECT pgmate.training_chart($trained)" > "$root/build/demo-training-chart.svg"
  echo "the training chart: build/demo-training-chart.svg"
else
  echo "(Stockfish or pgmate-worker missing: the training demo is skipped)"
fi

echo
echo "The server is still running. Connect with:"
echo "  psql -h $PGHOST -p $PGPORT -U $PGUSER pgmate"
echo "Stop it with: make server-stop"
