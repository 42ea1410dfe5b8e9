
-- ===================================================================== ownership and leases
-- Rows of long jobs (training runs, matches, learning runs) carry the role that made them;
-- row-level security lets only that role write them, and the jobs trust only their
-- owner's rows. A job in progress holds its row by a lease (the backend's pid and start,
-- and when it took the row), not by an advisory lock, which any role could take first.

-- The role whose rights the caller has now (SET ROLE included), as a regrole. Like every
-- routine of pgmate's, it resolves no name through the caller's search path: a role with a
-- schema of its own could otherwise put a quote_ident(name) or an =(regrole, regrole) of its
-- own before the built-ins and pass for another role.
CREATE FUNCTION pgmate.acting_role() RETURNS regrole
  LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
  AS $$ SELECT pg_catalog.to_regrole(pg_catalog.quote_ident(CURRENT_USER)) $$;
COMMENT ON FUNCTION pgmate.acting_role() IS 'the current role (current_user) as a regrole: the owner of the rows it makes';

-- The role that logged in, which neither SET ROLE nor SET SESSION AUTHORIZATION changes:
-- what runs in the session may always go back to it (RESET ROLE), so a stored query runs
-- only in a session its owner logged in to (pgmate.learn).
CREATE FUNCTION pgmate.login_role() RETURNS regrole
  AS 'MODULE_PATHNAME', 'login_role' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION pgmate.login_role() IS
  'the role this session logged in as (what SET ROLE and SET SESSION AUTHORIZATION leave unchanged), as a regrole';

-- Whether the session `pid`, started at `backend_start`, still holds a lease it took at
-- `since`: a lease taken by a statement (a procedure) ends with it, so a statement that
-- failed, was cancelled or was followed by another one holds nothing any more; a lease of
-- the whole session (`since` NULL: a client working through many statements) ends with the
-- session. A session that ended holds nothing. Sessions of
-- other roles are visible here (the function runs as the extension's owner), but only
-- this yes or no comes out.
CREATE FUNCTION pgmate.session_is_working(pid int, backend_start timestamptz, since timestamptz) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
    SELECT pid IS NOT NULL AND EXISTS (
      SELECT 1 FROM pg_stat_activity a
      WHERE a.pid = session_is_working.pid AND a.backend_start = session_is_working.backend_start
        AND (since IS NULL OR a.state IS DISTINCT FROM 'idle' AND a.query_start <= since))
  $$;
COMMENT ON FUNCTION pgmate.session_is_working(int, timestamptz, timestamptz) IS
  'whether a session still runs the statement that took a lease at a time (a dead, idle or moved-on session holds nothing)';

-- What a client works on through many statements (a pgmate selfplay run, a pgmate arena
-- match), claimed for its session: a second client of the same name stops at once. Claims
-- are each login role's own (session_user), so no role can hold a name another role uses;
-- an advisory lock could be taken first by anyone.
CREATE TABLE pgmate.client_claims (
  owner                name NOT NULL,
  name                 text NOT NULL,
  holder_pid           int NOT NULL,
  holder_backend_start timestamptz NOT NULL,
  PRIMARY KEY (owner, name)
);
COMMENT ON TABLE pgmate.client_claims IS 'names claimed by client sessions (pgmate selfplay runs, pgmate arena matches)';

-- Claims `name` for this session, for as long as it lasts; false while another live session
-- of the same login role holds it.
CREATE FUNCTION pgmate.client_claim(name text) RETURNS boolean
  LANGUAGE plpgsql VOLATILE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp
  AS $$
  #variable_conflict use_column
  DECLARE
    me_start timestamptz := (SELECT a.backend_start FROM pg_stat_activity a WHERE a.pid = pg_backend_pid());
  BEGIN
    IF length(client_claim.name) > 200 THEN
      RAISE EXCEPTION 'a client claim''s name has at most 200 characters, not %', length(client_claim.name)
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- Claims of sessions that ended are gone: the table holds at most the live sessions' claims.
    DELETE FROM pgmate.client_claims c
    WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a
                      WHERE a.pid = c.holder_pid AND a.backend_start = c.holder_backend_start);
    INSERT INTO pgmate.client_claims AS c (owner, name, holder_pid, holder_backend_start)
    VALUES (session_user, client_claim.name, pg_backend_pid(), me_start)
    ON CONFLICT (owner, name) DO UPDATE SET holder_pid = excluded.holder_pid,
                                            holder_backend_start = excluded.holder_backend_start
      WHERE c.holder_pid = excluded.holder_pid AND c.holder_backend_start = excluded.holder_backend_start
         OR NOT pgmate.session_is_working(c.holder_pid, c.holder_backend_start, NULL);
    RETURN FOUND;
  END
  $$;
-- Only the clients' roles need it (docs/security.md): no role without a grant adds rows.
REVOKE ALL ON FUNCTION pgmate.client_claim(text) FROM PUBLIC;
COMMENT ON FUNCTION pgmate.client_claim(text) IS
  'claims a name for this session (a client''s run or match); false while another session of the same login role holds it';
