# pgmate selfplay's option errors (exit 2, the reason on stderr, nothing on stdout, no
# file written), and the database commands of a pgmate built without libpqxx (HAVE_PQXX
# OFF) or, with it, a database that cannot be reached (exit 1). No server is needed.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(pgn ${WORK_DIR}/games.pgn)
set(small --games 1 --simulations 4 --max-plies 10)
set(config "{\"filters\":8,\"blocks\":1}")

function(expect_failure expected_rc needle)
  execute_process(COMMAND ${PGMATE} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(FIND "${err}" "${needle}" at)
  if(NOT rc EQUAL expected_rc OR NOT out STREQUAL "" OR at EQUAL -1)
    message(FATAL_ERROR "pgmate ${ARGN}: expected exit ${expected_rc} and \"${needle}\" on stderr; "
                        "got exit ${rc}; stdout: ${out}; stderr: ${err}")
  endif()
  if(EXISTS ${pgn})
    message(FATAL_ERROR "pgmate ${ARGN} wrote ${pgn}")
  endif()
endfunction()

expect_failure(2 "--db CONNINFO or --pgn FILE is required" selfplay ${small})
expect_failure(2 "--db and --pgn are alternatives" selfplay ${small} --db dbname=none --pgn ${pgn})
expect_failure(2 "--network ID reads pgmate.networks and needs --db" selfplay ${small} --pgn ${pgn} --network 1)
expect_failure(2 "--network-config needs --worker ADDRESS" selfplay ${small} --pgn ${pgn} --network-config ${config})
expect_failure(2 "--network-config: network config:" selfplay ${small} --pgn ${pgn}
               --network-config "{\"filters\":12}" --worker ${WORK_DIR}/none.sock)
expect_failure(2 "--network ID (a stored network) and --network-config (random weights) are alternatives"
               selfplay ${small} --pgn ${pgn} --network 1 --network-config ${config} --worker ${WORK_DIR}/none.sock)
expect_failure(2 "--network-seed is for --network-config" selfplay ${small} --pgn ${pgn} --network-seed 3)
expect_failure(2 "--worker is for network evaluation" selfplay ${small} --pgn ${pgn} --worker ${WORK_DIR}/none.sock)
# A worker that is not there: exit 1, and the file is left alone.
expect_failure(1 "cannot reach pgmate-worker at ${WORK_DIR}/none.sock" selfplay ${small} --pgn ${pgn}
               --network-config ${config} --worker ${WORK_DIR}/none.sock)

if(HAVE_PQXX)
  expect_failure(1 "cannot connect to the database" selfplay ${small} --db "host=${WORK_DIR}/no-server")
else()
  expect_failure(2 "this pgmate was built without libpqxx: selfplay --db needs PostgreSQL" selfplay ${small} --db dbname=none)
  expect_failure(2 "this pgmate was built without libpqxx: pgmate import" import ${WORK_DIR}/games.pgn)
  execute_process(COMMAND ${PGMATE} --help OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "built without libpqxx")
    message(FATAL_ERROR "pgmate --help does not say that it was built without libpqxx: ${out}")
  endif()
endif()
