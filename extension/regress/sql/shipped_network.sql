-- The network pgmate ships (networks/pgmate_default.safetensors, installed beside the
-- extension): one call puts it into pgmate.networks, a second call gives the same row, and
-- the worker evaluates it.
SELECT pgmate.install_network() AS id \gset
SELECT pgmate.install_network('default') = :id AS same_row;
SELECT count(*) AS rows_with_its_weights FROM pgmate.networks
WHERE weights_sha256 = (SELECT weights_sha256 FROM pgmate.networks WHERE id = :id);
SELECT name, config ? 'filters' AS has_config, octet_length(weights) > 100000 AS has_weights,
       notes LIKE 'shipped with pgmate %' AS noted,
       weights = pgmate.shipped_network('default') AS the_file
FROM pgmate.networks WHERE id = :id;
SELECT pgmate.wait_for_worker('60 s');
SELECT abs(win + draw + loss - 1) < 0.001 AS wdl_sums FROM evaluate(ARRAY['startpos'::board], :id);
-- names that are no shipped network
\set VERBOSITY terse
SELECT pgmate.install_network('nope');
SELECT pgmate.install_network('../../etc/passwd');
SELECT pgmate.install_network('');
\set VERBOSITY default
-- The suites after this one find the table as they would without it.
DELETE FROM pgmate.networks WHERE id = :id;
SELECT setval('pgmate.networks_id_seq', coalesce((SELECT max(id) FROM pgmate.networks), 1),
              (SELECT max(id) FROM pgmate.networks) IS NOT NULL) IS NOT NULL AS restored;
