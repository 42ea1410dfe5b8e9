#!/usr/bin/env bash
# pgmate.learn as a pg_cron job (Debian's postgresql-15-cron), as docs/learning.md sets it up: a
# server of its own with pg_cron preloaded runs one learning iteration per run of the job;
# the iteration is stored whole and pg_cron records the run as succeeded. The run's arena
# plays with the Gumbel root (arena_search). Skipped (and said so) when pg_cron is not
# installed.
#
#   tests/cli/cron.sh PGMATE
#
# Prints "cron: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 1 ]; then
  echo "usage: $0 PGMATE" >&2
  exit 2
fi
PGMATE=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/checks.sh"

if [ ! -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
  echo "cron: skipped (pg_cron is not installed: apt-get install postgresql-15-cron)"
  exit 0
fi

# A cluster of its own: pg_cron must be preloaded, and its jobs connect over the socket.
export PGMATE_PGDATA
PGMATE_PGDATA=$(mktemp -d /tmp/pgmate-cron.XXXXXX)
chmod 755 "$PGMATE_PGDATA"
export PGMATE_PGPORT=${PGMATE_CRON_PORT:-5439}
DB=pgmate_cron_test
export PGMATE_SERVER_OPTIONS="-c shared_preload_libraries=pgmate,pg_cron -c cron.database_name=$DB \
  -c cron.host=$PGMATE_PGDATA/socket"
cleanup() {
  "$root/scripts/pg-server.sh" stop >/dev/null 2>&1
  rm -rf "$PGMATE_PGDATA"
}
trap cleanup EXIT
"$root/scripts/pg-server.sh" start >/dev/null || { echo "cron: cannot start a server with pg_cron"; exit 1; }
eval "$("$root/scripts/pg-server.sh" env)"
createdb "$DB"
q "CREATE EXTENSION pgmate; CREATE EXTENSION pg_cron" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null
"$PGMATE" import --openings --db "dbname=$DB" >/dev/null  # the arena's openings
net=$(q "SELECT pgmate.init_network('cron', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0, \"policy_head\": \"conv\"}', 3)")
options="{\"network\": $net, \"games\": 4, \"simulations\": 8, \"parallel\": 2, \"max_plies\": 16, \"steps\": 30,
          \"batch\": 16, \"arena_games\": 2, \"arena_interval\": 1, \"veto_games\": 2, \"sanity_games\": 2, \"arena_simulations\": 8,
          \"arena_search\": \"gumbel\", \"seed\": 5}"

# A run of another role whose stored holdout would make that role superuser if it ran with
# a superuser's rights; a superuser's job that names it is refused, and nothing of it runs.
q "CREATE ROLE cron_mallory; CREATE SCHEMA cron_mallory AUTHORIZATION cron_mallory;
   CREATE FUNCTION cron_mallory.pwn() RETURNS boolean LANGUAGE plpgsql AS
     \$\$BEGIN IF current_user <> 'cron_mallory' THEN EXECUTE 'ALTER ROLE cron_mallory SUPERUSER'; END IF;
            RETURN true; END\$\$;
   ALTER FUNCTION cron_mallory.pwn() OWNER TO cron_mallory" >/dev/null
q "CALL pgmate.learn('stranger', 0, '$options')" >/dev/null 2>&1
q "UPDATE pgmate.learning_runs SET owner = 'cron_mallory',
     settings = settings || '{\"holdout\": \"SELECT * FROM pgmate.game_targets WHERE cron_mallory.pwn() LIMIT 8\"}'
   WHERE name = 'stranger'" >/dev/null
stranger_job=$(q "SELECT cron.schedule('stranger', '* * * * *', \$\$CALL pgmate.learn('stranger', 1)\$\$)")

# The superuser's own run, begun before its job: a learner with a schema of its own shadows
# quote_ident(name) and =(regrole, regrole) and rewrites the run's holdout to make itself
# superuser when the job runs it. The owner checks resolve no name through her path: her
# UPDATE finds no row, and the job runs the run as it was.
q "CALL pgmate.learn('by cron', 0, '$options')" >/dev/null 2>&1
q "ALTER ROLE cron_mallory LOGIN; GRANT USAGE ON SCHEMA pgmate TO cron_mallory;
   GRANT SELECT, UPDATE ON pgmate.learning_runs TO cron_mallory" >/dev/null
hijack=$(PGOPTIONS="-c search_path=cron_mallory,pg_catalog,public" psql -X -q -A -t -d "$DB" -U cron_mallory 2>&1 <<'SQL'
CREATE FUNCTION cron_mallory.quote_ident(name) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'postgres'::text $$;
CREATE FUNCTION cron_mallory.always(regrole, regrole) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT true $$;
CREATE OPERATOR cron_mallory.= (LEFTARG = regrole, RIGHTARG = regrole, FUNCTION = cron_mallory.always);
SELECT pgmate.acting_role();
WITH u AS (UPDATE pgmate.learning_runs SET settings = settings OPERATOR(pg_catalog.||) jsonb_build_object('holdout',
             'SELECT * FROM pgmate.game_targets WHERE cron_mallory.pwn() LIMIT 8')
           WHERE name OPERATOR(pg_catalog.=) 'by cron' RETURNING 1)
SELECT 'updated ' || count(*) FROM u;
SQL
)
check "cron: the shadowing learner is herself to pgmate, and rewrites no run of the superuser's" \
  "$(printf '%s' "$hijack" | tr '\n' ' ')" "cron_mallory updated 0"

# Every minute, one iteration (pg_cron's finest schedule in this version).
learn_job=$(q "SELECT cron.schedule('learn', '* * * * *', \$\$CALL pgmate.learn('by cron', 1, '$options')\$\$)")
iterations=0
for _ in $(seq 1 180); do  # up to three minutes: the first run starts at the next minute
  iterations=$(q "SELECT count(*) FROM pgmate.learning_log WHERE run = 'by cron'")
  [ "$iterations" -ge 1 ] && break
  sleep 1
done
q "SELECT cron.unschedule('learn')" >/dev/null
for _ in $(seq 1 60); do
  [ "$(q "SELECT count(*) FROM cron.job_run_details d
          WHERE d.jobid = $stranger_job AND d.status <> 'running'")" -ge 1 ] && break
  sleep 1
done
q "SELECT cron.unschedule('stranger')" >/dev/null
check "cron: a job naming another role's run is refused" \
  "$(q "SELECT bool_and(d.status = 'failed' AND d.return_message LIKE '%belongs to role cron_mallory%')
        FROM cron.job_run_details d WHERE d.jobid = $stranger_job")" t
check "cron: no holdout was planted in the superuser's run" \
  "$(q "SELECT settings ? 'holdout' FROM pgmate.learning_runs WHERE name = 'by cron'")" f
check "cron: the other role's stored query never ran" \
  "$(q "SELECT rolsuper FROM pg_roles WHERE rolname = 'cron_mallory'")" f
check "cron: an iteration stored by the job" "$([ "$iterations" -ge 1 ] && echo yes)" yes
check "cron: the iteration is whole" \
  "$(q "SELECT decision IS NOT NULL AND games = 4 FROM pgmate.learning_log WHERE run = 'by cron' AND iteration = 1")" t
for _ in $(seq 1 60); do  # the job's own record is written when its command returns
  [ "$(q "SELECT count(*) FROM cron.job_run_details d
          WHERE d.jobid = $learn_job AND d.status <> 'running'")" -ge 1 ] && break
  sleep 1
done
check "cron: pg_cron records the run as succeeded" \
  "$(q "SELECT string_agg(DISTINCT d.status, ',') FROM cron.job_run_details d
        WHERE d.jobid = $learn_job AND d.status <> 'running'")" succeeded
check "cron: the networks played the arena with the Gumbel root (arena_search)" \
  "$(q "SELECT count(*) > 0 AND bool_and(a->>'search' = 'gumbel') FROM pgmate.matches WHERE a->>'type' = 'net'")" t
check "cron: the run is one learning run" "$(q "SELECT count(*) FROM pgmate.learning_runs WHERE name = 'by cron'")" 1

echo "cron: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
