#!/usr/bin/env bash
# The SQL suites: pg_regress (make installcheck), the documentation's checks, then the
# search-path shadowing harness and the memory bounds, the import, the game database over two
# shards (servers of their own, against one server), self-play, analysis, arena (and
# misbehaving UCI engines), train and learn clients against the project's own server, the network recipe, the GPU check's loop stage on the
# CPU, and the learning loop as a pg_cron job on a server of its own. A server this script
# starts is stopped again when it ends; one that was already running (make demo) is
# restarted and left running.
# Usage: scripts/run-sql-tests.sh PGMATE_BINARY
set -euo pipefail
pgmate=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# (Re)start so the server preloads the freshly installed module and its worker.
if scripts/pg-server.sh status >/dev/null 2>&1; then
  scripts/pg-server.sh restart
else
  scripts/pg-server.sh start
  trap 'scripts/pg-server.sh stop' EXIT
fi
eval "$(scripts/pg-server.sh env)"

if ! make -s installcheck; then
  head -n 200 regression.diffs 2>/dev/null || true
  exit 1
fi
# The documentation: its generated parts as the code gives them, its runnable examples run.
python3 scripts/docs.py check --pgmate "$pgmate"
python3 scripts/docs.py examples
# A client test in a database of its own, made afresh and dropped when it passes.
in_fresh_db() {  # NAME COMMAND...: runs COMMAND... DB with DB = pgmate_NAME_test
  local db="pgmate_$1_test"
  shift
  dropdb --if-exists "$db"
  createdb "$db"
  "$@" "$db"
  dropdb "$db"
}
in_fresh_db search_path tests/cli/search_path.sh "$pgmate"  # no name resolves through the caller's path
in_fresh_db memory tests/cli/memory.sh  # bounded server memory for every caller
for t in import index_locks shards selfplay analyse arena engines train learn; do
  in_fresh_db "$t" "tests/cli/$t.sh" "$pgmate"
done
tests/cli/network_recipe.sh "$pgmate"  # make network at its smallest
tests/cli/gpu_loop.sh "$pgmate"  # the GPU check's loop stage on the CPU, from the bundle
tests/cli/cron.sh "$pgmate"  # a server of its own, with pg_cron preloaded
