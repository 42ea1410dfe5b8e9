#!/usr/bin/env bash
# The SQL suites: pg_regress (make installcheck), the documentation's checks, then the
# search-path shadowing harness and the memory bounds, the import, self-play, analysis, arena (and misbehaving UCI engines), train and learn clients
# against the project's own server, the network recipe, the GPU check's loop stage on the
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
dropdb --if-exists pgmate_search_path_test
createdb pgmate_search_path_test
tests/cli/search_path.sh "$pgmate" pgmate_search_path_test  # no name resolves through the caller's path
dropdb pgmate_search_path_test
dropdb --if-exists pgmate_memory_test
createdb pgmate_memory_test
tests/cli/memory.sh pgmate_memory_test  # bounded server memory for every caller
dropdb pgmate_memory_test
dropdb --if-exists pgmate_import_test
createdb pgmate_import_test
tests/cli/import.sh "$pgmate" pgmate_import_test
dropdb pgmate_import_test
dropdb --if-exists pgmate_index_locks_test
createdb pgmate_index_locks_test
tests/cli/index_locks.sh "$pgmate" pgmate_index_locks_test
dropdb pgmate_index_locks_test
dropdb --if-exists pgmate_selfplay_test
createdb pgmate_selfplay_test
tests/cli/selfplay.sh "$pgmate" pgmate_selfplay_test
dropdb pgmate_selfplay_test
dropdb --if-exists pgmate_analyse_test
createdb pgmate_analyse_test
tests/cli/analyse.sh "$pgmate" pgmate_analyse_test
dropdb pgmate_analyse_test
dropdb --if-exists pgmate_arena_test
createdb pgmate_arena_test
tests/cli/arena.sh "$pgmate" pgmate_arena_test
dropdb pgmate_arena_test
dropdb --if-exists pgmate_engines_test
createdb pgmate_engines_test
tests/cli/engines.sh "$pgmate" pgmate_engines_test
dropdb pgmate_engines_test
dropdb --if-exists pgmate_train_test
createdb pgmate_train_test
tests/cli/train.sh "$pgmate" pgmate_train_test
dropdb pgmate_train_test
dropdb --if-exists pgmate_learn_test
createdb pgmate_learn_test
tests/cli/learn.sh "$pgmate" pgmate_learn_test
dropdb pgmate_learn_test
tests/cli/network_recipe.sh "$pgmate"  # make network at its smallest
tests/cli/gpu_loop.sh "$pgmate"  # the GPU check's loop stage on the CPU, from the bundle
tests/cli/cron.sh "$pgmate"  # a server of its own, with pg_cron preloaded
