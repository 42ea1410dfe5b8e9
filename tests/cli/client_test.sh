# The opening the client tests share (sourced, with the test's own arguments): PGMATE and
# DB from the command line, the checks of checks.sh, and TMP, a folder removed at exit,
# when the background client (bg_pid) is killed too.
if [ $# -ne 2 ]; then
  echo "usage: $0 PGMATE DBNAME" >&2
  exit 2
fi
PGMATE=$1
DB=$2

. "$(dirname "${BASH_SOURCE[0]}")/checks.sh"

TMP=$(mktemp -d)
cleanup() {
  if [ -n "$bg_pid" ]; then kill -9 "$bg_pid" 2>/dev/null; fi
  rm -rf "$TMP"
}
trap cleanup EXIT
