# Shared by the client test scripts (sourced): counters and checks, psql on $DB, and the
# background client that tests kill (bg_pid, whose sessions carry application_name=$app).
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
# check NAME GOT EXPECTED
check() {
  if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected [$3], got [$2]"; fi
}
# check_match NAME TEXT REGEX
check_match() {
  if printf '%s' "$2" | grep -Eq -- "$3"; then pass "$1"; else fail "$1: [$2] does not match /$3/"; fi
}
q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

bg_pid=
# Kills the background client and waits until it is gone, and its server session too.
stop_bg() {
  kill -9 "$bg_pid" 2>/dev/null
  while kill -0 "$bg_pid" 2>/dev/null; do sleep 0.05; done
  bg_pid=
  for _ in $(seq 1 100); do  # the server notices the closed connection and rolls back
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$app'")" = 0 ] && break
    sleep 0.1
  done
}
