#!/usr/bin/env bash
# No routine of pgmate's resolves a name through the caller's search path. A hostile role
# (the learner recipe and a schema of its own) plants in its schema a shadow of every
# pg_catalog function, aggregate and operator that pgmate's SQL names (the install script
# and the extension's C sources): each shadow raises a WARNING "SHADOW RAN" and then does
# what the built-in does. Every session here has that schema first on its search path,
# before pg_catalog. The owner, lease, training, matching, index and analysis entry points
# then run as the hostile role and as its victims (the superuser, alice); the test fails if
# any shadow ran, if the hostile role changed another role's row, or if plpgsql_check finds
# an error in a PL/pgSQL body of the extension.
#
#   tests/cli/search_path.sh PGMATE DB
#
# Prints "search path: N passed, M failed" and exits 1 on any failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 PGMATE DB" >&2
  exit 2
fi
PGMATE=$1
DB=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/checks.sh"
log=$(mktemp /tmp/pgmate-search-path.XXXXXX)
trap '[ "${KEEP_LOG:-}" ] || rm -f "$log"' EXIT

q "CREATE EXTENSION pgmate" >/dev/null
q "SELECT pgmate.wait_for_worker()" >/dev/null
"$PGMATE" import --openings --db "dbname=$DB" >/dev/null

# ------------------------------------------------------------------ roles (docs/security.md)
recipe() {  # every grant block of docs/security.md, to one role: the learner recipe and the rest
  sed -n '/^```sql/,/^```/p' "$root/docs/security.md" | grep -v '^```' |
    sed -E "s/ TO (player|trainer|referee|learner|analyst|importer)\b/ TO $1/g"
}
for r in sp_hostile sp_alice; do
  q "DROP OWNED BY $r; DROP ROLE IF EXISTS $r" >/dev/null 2>&1
  q "CREATE ROLE $r LOGIN" >/dev/null
  recipe "$r" | psql -X -q -v ON_ERROR_STOP=1 -d "$DB" >/dev/null || fail "the recipes grant to $r"
  # and beyond the recipes, everything that row-level security alone keeps in bounds
  q "GRANT SELECT ON ALL TABLES IN SCHEMA pgmate TO $r; GRANT SELECT, INSERT ON pgmate.position_evals TO $r;
     GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA pgmate, public TO $r;
     GRANT EXECUTE ON ALL PROCEDURES IN SCHEMA pgmate TO $r" >/dev/null
done
q "CREATE SCHEMA sp_hostile AUTHORIZATION sp_hostile; GRANT USAGE ON SCHEMA sp_hostile TO PUBLIC" >/dev/null

# ------------------------------------------------------------------ the shadows
# The names pgmate's SQL uses: words before "(" in the install script and the C sources.
sources=("$root"/extension/sql/*.sql "$root"/extension/src/*.cpp)
for f in "${sources[@]}"; do [ -f "$f" ] || { echo "search path: no source $f" >&2; exit 1; }; done
names=$(cat "${sources[@]}" |
        grep -oE '\b[a-z_][a-z0-9_]*[[:space:]]*\(' | tr -d ' (' | sort -u | paste -sd, -)
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -U sp_hostile -v names="$names" >"$log" 2>&1 <<'SQL'
SET search_path = pg_catalog;
SELECT set_config('sp.names', :'names', false);
CREATE TABLE sp_hostile.made (kind text, n int);
DO $$
DECLARE
  p record;
  args text;
  call_args text;
  body text;
  made int := 0;
  skipped int := 0;
  ops int := 0;
  aggs int := 0;
BEGIN
  -- functions: the same signature, first on the path
  FOR p IN
    SELECT f.oid, f.proname, f.proretset, f.provolatile, f.proisstrict, f.pronargs,
           pg_get_function_arguments(f.oid) AS args, pg_get_function_result(f.oid) AS result
    FROM pg_proc f
    WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind = 'f'
      AND f.proname = ANY (string_to_array(current_setting('sp.names'), ','))
  LOOP
    BEGIN
      SELECT string_agg('$' || i, ', ') INTO call_args FROM generate_series(1, p.pronargs) i;
      body := CASE WHEN p.proretset
                   THEN format('RETURN QUERY SELECT * FROM pg_catalog.%I(%s);', p.proname, coalesce(call_args, ''))
                   ELSE format('RETURN pg_catalog.%I(%s);', p.proname, coalesce(call_args, '')) END;
      EXECUTE format('CREATE FUNCTION sp_hostile.%I(%s) RETURNS %s LANGUAGE plpgsql %s %s AS %L',
                     p.proname, p.args, p.result,
                     CASE p.provolatile WHEN 'i' THEN 'IMMUTABLE' WHEN 's' THEN 'STABLE' ELSE 'VOLATILE' END,
                     CASE WHEN p.proisstrict THEN 'STRICT' ELSE '' END,
                     format('BEGIN RAISE WARNING ''SHADOW RAN: %s(%s)''; %s END', p.proname,
                            replace(p.args, '''', ''''''), body));
      made := made + 1;
    EXCEPTION WHEN OTHERS THEN
      skipped := skipped + 1;  -- pseudo-types plpgsql cannot take ("any", internal, cstring)
    END;
  END LOOP;
  -- aggregates whose state is an SQL type: the same state function behind a spy
  FOR p IN
    SELECT f.oid, f.proname, a.aggtransfn, a.aggtranstype::regtype AS stype, a.agginitval, a.aggfinalfn,
           t.proisstrict AS strict_trans, f.pronargs, pg_get_function_arguments(f.oid) AS args
    FROM pg_proc f JOIN pg_aggregate a ON a.aggfnoid = f.oid JOIN pg_proc t ON t.oid = a.aggtransfn
    WHERE f.pronamespace = 'pg_catalog'::regnamespace AND f.prokind = 'a' AND a.aggkind = 'n'
      AND a.aggtranstype <> 'internal'::regtype
      AND f.proname = ANY (string_to_array(current_setting('sp.names'), ','))
  LOOP
    BEGIN
      SELECT string_agg('$' || i, ', ') INTO call_args
      FROM pg_proc t, generate_series(1, t.pronargs) i WHERE t.oid = p.aggtransfn;
      args := pg_get_function_arguments(p.aggtransfn);
      EXECUTE format('CREATE FUNCTION sp_hostile.%I(%s) RETURNS %s LANGUAGE plpgsql %s AS %L',
                     'spy_' || p.aggtransfn::regproc::text, args, p.stype,
                     CASE WHEN p.strict_trans THEN 'STRICT' ELSE '' END,
                     format('BEGIN RAISE WARNING ''SHADOW RAN: aggregate %s''; RETURN %s(%s); END', p.proname,
                            p.aggtransfn::regproc, call_args));
      EXECUTE format('CREATE AGGREGATE sp_hostile.%I(%s) (SFUNC = sp_hostile.%I, STYPE = %s%s%s)',
                     p.proname, CASE WHEN p.pronargs = 0 THEN '*' ELSE p.args END,
                     'spy_' || p.aggtransfn::regproc::text, p.stype,
                     CASE WHEN p.aggfinalfn <> 0 THEN ', FINALFUNC = ' || p.aggfinalfn::regproc::text ELSE '' END,
                     CASE WHEN p.agginitval IS NOT NULL THEN format(', INITCOND = %L', p.agginitval) ELSE '' END);
      aggs := aggs + 1;
    EXCEPTION WHEN OTHERS THEN
      skipped := skipped + 1;
    END;
  END LOOP;
  -- operators: the same operands, first on the path
  FOR p IN
    SELECT o.oprname, o.oprleft::regtype AS l, o.oprright::regtype AS r, o.oprresult::regtype AS res,
           o.oprkind, o.oprcode
    FROM pg_operator o
    WHERE o.oprnamespace = 'pg_catalog'::regnamespace
      AND o.oprname IN ('=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/', '%', '||', '->', '->>', '#>',
                        '#>>', '?', '?|', '?&', '@>', '<@', '&&', '~', '~*', '!~', '~~', '!~~', '<<', '>>', '&', '|', '#')
  LOOP
    BEGIN
      IF p.oprkind = 'b' THEN
        EXECUTE format('CREATE FUNCTION sp_hostile.%I(%s, %s) RETURNS %s LANGUAGE plpgsql IMMUTABLE AS %L',
                       'spy_' || p.oprcode::regproc::text, p.l, p.r, p.res,
                       format('BEGIN RAISE WARNING ''SHADOW RAN: operator %s(%s, %s)''; RETURN %s($1, $2); END',
                              p.oprname, p.l, p.r, p.oprcode::regproc));
        EXECUTE format('CREATE OPERATOR sp_hostile.%s (LEFTARG = %s, RIGHTARG = %s, FUNCTION = sp_hostile.%I)',
                       p.oprname, p.l, p.r, 'spy_' || p.oprcode::regproc::text);
      ELSE
        EXECUTE format('CREATE FUNCTION sp_hostile.%I(%s) RETURNS %s LANGUAGE plpgsql IMMUTABLE AS %L',
                       'spy_' || p.oprcode::regproc::text, p.r, p.res,
                       format('BEGIN RAISE WARNING ''SHADOW RAN: operator %s(%s)''; RETURN %s($1); END',
                              p.oprname, p.r, p.oprcode::regproc));
        EXECUTE format('CREATE OPERATOR sp_hostile.%s (RIGHTARG = %s, FUNCTION = sp_hostile.%I)',
                       p.oprname, p.r, 'spy_' || p.oprcode::regproc::text);
      END IF;
      ops := ops + 1;
    EXCEPTION WHEN OTHERS THEN
      skipped := skipped + 1;
    END;
  END LOOP;
  -- the review's two: an exact match for current_user, and an = on regrole that says yes
  CREATE FUNCTION sp_hostile.quote_ident(name) RETURNS text LANGUAGE plpgsql IMMUTABLE
    AS $f$ BEGIN RAISE WARNING 'SHADOW RAN: quote_ident(name)'; RETURN 'postgres'; END $f$;
  CREATE FUNCTION sp_hostile.always(regrole, regrole) RETURNS boolean LANGUAGE plpgsql IMMUTABLE
    AS $f$ BEGIN RAISE WARNING 'SHADOW RAN: operator =(regrole, regrole)'; RETURN true; END $f$;
  CREATE OPERATOR sp_hostile.= (LEFTARG = regrole, RIGHTARG = regrole, FUNCTION = sp_hostile.always);
  INSERT INTO sp_hostile.made VALUES ('functions', made), ('aggregates', aggs), ('operators', ops),
                                     ('skipped', skipped);
END $$;
SQL
[ $? -eq 0 ] || { cat "$log"; fail "the shadows are planted"; }
q "GRANT SELECT ON sp_hostile.made TO PUBLIC" >/dev/null 2>&1
made=$(q "SELECT string_agg(kind || ' ' || n, ', ' ORDER BY kind) FROM sp_hostile.made")
echo "shadows: $made"
check_match "shadows: hundreds of functions and operators" \
  "$(q "SELECT sum(n) FILTER (WHERE kind = 'functions') > 100 AND sum(n) FILTER (WHERE kind = 'operators') > 300
        FROM sp_hostile.made")" t
# the shadows work: the hostile role's own unqualified call goes to hers
check_match "shadows: an unqualified call in the hostile role's own query runs her shadow" \
  "$(PGOPTIONS="-c search_path=sp_hostile,pg_catalog,public" psql -X -A -t -d "$DB" -U sp_hostile \
       -c "SELECT length('abc')" 2>&1)" "SHADOW RAN: length"

# ------------------------------------------------------------------ entry points
shadowed="-c search_path=sp_hostile,pg_catalog,public -c client_min_messages=warning"
# as ROLE, under the shadowing path; the output goes to the log, each statement on its own
as() {
  local role=$1
  shift
  PGOPTIONS="$shadowed" psql -X -A -t -d "$DB" -U "$role" -c "$1" >>"$log" 2>&1
}
: >"$log"
net=$(q "SELECT pgmate.init_network('search path', '{\"filters\": 8, \"blocks\": 1, \"attention_blocks\": 0, \"policy_head\": \"conv\"}', 3)")
q "GRANT SELECT ON pgmate.networks TO PUBLIC" >/dev/null
options="{\"network\": $net, \"games\": 2, \"simulations\": 4, \"parallel\": 2, \"max_plies\": 12, \"steps\": 2,
          \"batch\": 8, \"arena_games\": 2, \"arena_interval\": 1, \"veto_games\": 2, \"sanity_games\": 2,
          \"sanity_interval\": 1, \"arena_simulations\": 2, \"seed\": 5, \"openings\": \"eco\",
          \"pretrain_data\": \"SELECT board, history, repetitions, played, wdl FROM pgmate.game_targets\",
          \"pretrain_mix\": 0.5, \"holdout\": \"SELECT * FROM pgmate.training_targets LIMIT 4\"}"
pgn='[White "sp"] [Black "sp"] [Result "1-0"] 1. e4 { [%eval 0.3] [%clk 0:03:00] } e5 { [%eval 0.2] } 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0'

# The victims' runs first, each in a session of its owner (the superuser's own, and alice's).
for who in postgres sp_alice; do
  as "$who" "CALL pgmate.learn('run of $who', 1, '$options')"
  as "$who" "SELECT pgmate.import_pgn('$pgn')"
done
# Every pgmate row of other roles, before the hostile role has its go.
others="SELECT md5(string_agg(x, '|' ORDER BY x)) FROM (
  SELECT r::text AS x FROM pgmate.learning_runs r WHERE owner::text <> 'sp_hostile' UNION ALL
  SELECT i::text FROM pgmate.learning_iterations i JOIN pgmate.learning_runs r ON r.id = i.run_id
    WHERE r.owner::text <> 'sp_hostile' UNION ALL
  SELECT e::text FROM pgmate.learning_exclusions e JOIN pgmate.learning_runs r ON r.id = e.run_id
    WHERE r.owner::text <> 'sp_hostile' UNION ALL
  SELECT t::text FROM pgmate.training_runs t WHERE owner::text <> 'sp_hostile' UNION ALL
  SELECT c.run_id || ':' || c.step || ':' || md5(c.state) FROM pgmate.training_checkpoints c
    JOIN pgmate.training_runs t ON t.id = c.run_id WHERE t.owner::text <> 'sp_hostile' UNION ALL
  SELECT m::text FROM pgmate.matches m WHERE owner::text <> 'sp_hostile') s"
before=$(q "$others")
admin_run=$(q "SELECT id FROM pgmate.learning_runs WHERE name = 'run of postgres'")
alice_run=$(q "SELECT id FROM pgmate.learning_runs WHERE name = 'run of sp_alice'")
alice_training=$(q "SELECT max(t.id) FROM pgmate.training_runs t WHERE t.owner::text = 'sp_alice'")
game=$(q "SELECT max(id) FROM pgmate.games")

# The hostile role: the owner checks, writes into others' rows (RLS), leases, claims, and
# its own loop, training, matches, analysis and searches.
hostile=(
  "SELECT pgmate.acting_role(), pgmate.login_role()"
  "SELECT pgmate.is_own_learning_run($admin_run), pgmate.is_own_training_run(${alice_training:-0})"
  "UPDATE pgmate.learning_runs SET holder_pid = pg_catalog.pg_backend_pid(), holder_since = NULL WHERE id OPERATOR(pg_catalog.=) $admin_run"
  "UPDATE pgmate.learning_runs SET settings = '{}' WHERE id OPERATOR(pg_catalog.=) $alice_run"
  "UPDATE pgmate.training_runs SET error = 'x' WHERE id OPERATOR(pg_catalog.=) ${alice_training:-0}"
  "UPDATE pgmate.training_checkpoints SET state = '\\x00' WHERE run_id OPERATOR(pg_catalog.=) ${alice_training:-0}"
  "INSERT INTO pgmate.learning_exclusions (run_id, game_id, iteration) VALUES ($admin_run, $game, 1)"
  "INSERT INTO pgmate.matches (name, a, b, options, games, owner) VALUES ('learn:$admin_run:2:best', '\"random\"', '\"random\"', '{}', 2, 'postgres')"
  "SELECT * FROM pgmate.learning_data($alice_run, 1) LIMIT 1"
  "SELECT pgmate.client_claim('search path')"
  "CALL pgmate.learn('run of sp_hostile', 1, '$options')"
  "CALL pgmate.learn('run of sp_hostile', 1)"
  "CALL pgmate.arena('\"random\"', '\"mcts:2\"', 2, '{\"name\": \"hostile match\"}')"
  "CALL pgmate.selfplay(2, 2, $net, 2, '{\"max_plies\": 8}')"
  "CALL pgmate.train($net, 'SELECT * FROM pgmate.training_targets LIMIT 16', 2, '{\"batch\": 8}')"
  "CALL pgmate.analyse('SELECT $game', '\"net:$net:2\"')"
  "SELECT pgmate.import_pgn('$pgn')"
  "SELECT pg_catalog.count(*) FROM pgmate.explorer('startpos'::board, '{\"min_rating\": 0, \"player\": \"sp\"}')"
  "SELECT pg_catalog.count(*) FROM pgmate.explorer('startpos'::board)"
  "SELECT pgmate.position_count('startpos'::board)"
  "SELECT pg_catalog.count(*) FROM pgmate.position_games('startpos'::board)"
  "SELECT pgmate.to_pgn_with_evals(g) FROM pgmate.games g WHERE id OPERATOR(pg_catalog.=) $game"
  "SELECT to_pgn(g), opening(g.start, g.moves) FROM pgmate.games g WHERE id OPERATOR(pg_catalog.=) $game"
  "SELECT pg_catalog.count(*) FROM pgmate.move_evals"
  "SELECT pg_catalog.count(*) FROM pgmate.game_accuracy"
  "SELECT pg_catalog.count(*) FROM pgmate.player_accuracy()"
  "SELECT pg_catalog.count(*) FROM pgmate.eval_targets"
  "SELECT pg_catalog.count(*) FROM pgmate.selfplay_lengths()"
  "SELECT pg_catalog.count(*) FROM pgmate.learning_status"
  "SELECT pgmate.learning_run_id('run of sp_hostile')"
  "SELECT pg_catalog.length(pgmate.learning_chart('run of sp_hostile'))"
  "SELECT pg_catalog.length(pgmate.training_chart($net))"
  "SELECT pg_catalog.count(*) FROM pgmate.network_accuracy($net, 'SELECT board, history, repetitions, played, wdl FROM pgmate.game_targets LIMIT 8')"
  "SELECT pgmate.weights_config(weights) IS NOT NULL FROM pgmate.networks WHERE id OPERATOR(pg_catalog.=) $net"
  "SELECT pg_catalog.count(*) FROM pgmate.game_targets"
)
for s in "${hostile[@]}"; do as sp_hostile "$s"; done
check "hostile: no other role's row changed" "$(q "$others")" "$before"
check "hostile: the superuser's run is not held by her" \
  "$(q "SELECT status FROM pgmate.learning_status WHERE run = 'run of postgres'")" idle
check "hostile: her own loop ran an iteration" \
  "$(q "SELECT count(*) > 0 FROM pgmate.learning_log WHERE run = 'run of sp_hostile'")" t
check "hostile: she is no superuser" "$(q "SELECT rolsuper FROM pg_roles WHERE rolname = 'sp_hostile'")" f

# The victims go on with their runs after her go, under the same path.
for who in postgres sp_alice; do
  as "$who" "CALL pgmate.learn('run of $who', 1)"
  as "$who" "CALL pgmate.analyse('SELECT $game', '\"net:$net:2\"')"
  as "$who" "SELECT pg_catalog.count(*) FROM pgmate.explorer('startpos'::board, '{\"source\": \"import\"}')"
done
check "victims: their second iterations are stored" \
  "$(q "SELECT pg_catalog.count(*) FROM pgmate.learning_log WHERE run IN ('run of postgres', 'run of sp_alice') AND iteration = 2")" 2
check "no shadow ran in any pgmate routine" "$(grep -c 'SHADOW RAN' "$log")" 0
grep 'SHADOW RAN' "$log" | sort | uniq -c | sort -rn | head -20
errors=$(grep -E '^(psql:.*)?ERROR' "$log" | grep -v -E 'row-level security|permission denied|belongs to role|learning run [0-9]+ belongs' | head -5)
check "no entry point failed but for the refusals" "$errors" ""

# ------------------------------------------------------------------ plpgsql_check
if [ -f "$(pg_config --sharedir)/extension/plpgsql_check.control" ]; then
  q "CREATE EXTENSION IF NOT EXISTS plpgsql_check" >/dev/null
  # every PL/pgSQL routine of the extension, checked as its own search path has it; errors
  # and warnings both count (security and performance warnings too, others are listed)
  report=$(q "SELECT p.oid::regprocedure || ': ' || c.level || ': ' || c.message
              FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
                   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgmate')
              CROSS JOIN LATERAL plpgsql_check_function_tb(p.oid, performance_warnings => false) c
              WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'plpgsql')
                AND p.prorettype <> 'trigger'::regtype
              ORDER BY 1")
  [ -n "$report" ] && echo "$report"
  # The one warning justified: wait_for_worker's loop ends only by RETURN (or its timeout's).
  check "plpgsql_check: no error or warning in any PL/pgSQL body" \
    "$(printf '%s' "$report" | grep -E ': (error|warning)' |
       grep -vc 'wait_for_worker(interval): warning extra: control reached end of function without RETURN')" 0
else
  echo "search path: plpgsql_check skipped (apt-get install postgresql-15-plpgsql-check)"
fi

q "DROP OWNED BY sp_hostile, sp_alice; DROP ROLE sp_hostile; DROP ROLE sp_alice" >/dev/null 2>&1
echo "search path: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
