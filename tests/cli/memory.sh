#!/usr/bin/env bash
# Server memory stays bounded for every caller: the backend's peak resident memory (VmHWM)
# after reading 2,000,000 PGN games with pgn_games is about what it was after 200,000 (each
# game's data is freed once its row is stored); an analysis checks the engine and the
# network before it reads its games query, reads the ids through a cursor, and refuses
# search trees that self-play would refuse.
#
#   tests/cli/memory.sh DB
#
# Prints "memory: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 DB" >&2
  exit 2
fi
DB=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/checks.sh"

q "CREATE EXTENSION pgmate" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null
q "DROP ROLE IF EXISTS mem_nobody; CREATE ROLE mem_nobody LOGIN; GRANT USAGE ON SCHEMA pgmate TO mem_nobody;
   DROP ROLE IF EXISTS mem_analyst; CREATE ROLE mem_analyst LOGIN;
   GRANT USAGE ON SCHEMA pgmate TO mem_analyst;
   GRANT EXECUTE ON PROCEDURE pgmate.analyse(text, jsonb, jsonb) TO mem_analyst" >/dev/null
net=$(q "SELECT pgmate.init_network('memory', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0, \"policy_head\": \"conv\"}', 3)")

# The peak memory of one session (kB) after each of its statements, read from /proc.
peaks=$(psql -X -q -A -t -d "$DB" -U mem_nobody <<'SQL' 2>&1
SELECT pg_backend_pid() AS pid \gset
\setenv PID :pid
SELECT count(*) FROM pgn_games(repeat(E'[W "x"]\n\n1. e4 *\n\n', 200000));
\! grep VmHWM /proc/$PID/status | tr -dc 0-9; echo
SELECT count(*) FROM pgn_games(repeat(E'[W "x"]\n\n1. e4 *\n\n', 2000000));
\! grep VmHWM /proc/$PID/status | tr -dc 0-9; echo
SQL
)
small=$(printf '%s\n' "$peaks" | sed -n 2p)
large=$(printf '%s\n' "$peaks" | sed -n 4p)
echo "pgn_games: VmHWM ${small} kB after 200,000 games, ${large} kB after 2,000,000"
check "pgn_games: every game read" "$(printf '%s\n' "$peaks" | sed -n '1p;3p' | paste -sd,)" "200000,2000000"
# 2M games of text are 38 MB, read once and copied once; 3 KB a game kept would be 6 GB
check "pgn_games: 10 times the games, less than 200 MB more peak memory" \
  "$([ -n "$small" ] && [ -n "$large" ] && [ $((large - small)) -lt 204800 ] && echo yes)" yes

# An analysis by a role that may not read networks reads none of its games query first.
out=$(psql -X -q -A -t -d "$DB" -U mem_analyst 2>&1 <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv PID :pid
CALL pgmate.analyse('SELECT g::bigint FROM generate_series(1, 20000000) g', '"net:$net:1"');
\! grep VmHWM /proc/\$PID/status | tr -dc 0-9; echo
SQL
)
check_match "analyse: the network is checked before the games query runs" "$out" "permission denied for table networks"
peak=$(printf '%s\n' "$out" | tail -1)
check "analyse: nothing of 20M game ids was read (peak under 100 MB)" "$([ -n "$peak" ] && [ "$peak" -lt 102400 ] && echo yes)" yes
check_match "analyse: not executable by PUBLIC" \
  "$(psql -X -q -A -t -d "$DB" -U mem_nobody -c "CALL pgmate.analyse('SELECT 1', '\"net:$net:1\"')" 2>&1)" \
  "permission denied for procedure analyse"
q "GRANT SELECT ON pgmate.networks TO mem_analyst" >/dev/null
check_match "analyse: a network analysis's trees are bounded as self-play's" \
  "$(psql -X -q -A -t -d "$DB" -U mem_analyst -c "CALL pgmate.analyse('SELECT 1', '\"net:$net:1000000\"', '{\"parallel\": 4096}')" 2>&1)" \
  "more than pgmate.selfplay_tree_memory"
check_match "analyse: the games query is one statement" \
  "$(q "CALL pgmate.analyse('SELECT 1) q; SELECT pg_sleep(2); SELECT q.* FROM (SELECT 1', '\"net:$net:1\"')" 2>&1)" \
  "must be one SELECT"

q "DROP OWNED BY mem_analyst; DROP ROLE mem_analyst; DROP OWNED BY mem_nobody; DROP ROLE mem_nobody" >/dev/null
echo "memory: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
