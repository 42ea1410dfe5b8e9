# pgmate selfplay --network-config with no database: a pgmate-worker on a private Unix
# socket (--device cpu) makes random weights for a tiny network, and the games are played
# with it. The worker runs under `timeout`, so a test that dies still leaves none behind.
include(${CMAKE_CURRENT_LIST_DIR}/selfplay_pgn_check.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(socket ${WORK_DIR}/w.sock)

execute_process(
  COMMAND sh -c "timeout 300 \"$0\" --socket \"$1\" --device cpu --threads 1 >\"$2\" 2>&1 & echo $!"
          ${PGMATE_WORKER} ${socket} ${WORK_DIR}/worker.log
  OUTPUT_VARIABLE worker_pid OUTPUT_STRIP_TRAILING_WHITESPACE)
set(PGMATE_ON_FAILURE kill ${worker_pid})
foreach(i RANGE 600)
  if(EXISTS ${socket})
    break()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 0.1)
endforeach()
if(NOT EXISTS ${socket})
  file(READ ${WORK_DIR}/worker.log log)
  pgmate_fail("pgmate-worker did not create ${socket} within 60 s:\n${log}")
endif()

set(run selfplay --pgn ${WORK_DIR}/games.pgn --games 2 --parallel 2 --simulations 8 --max-plies 16 --seed 3
        --network-config "{\"filters\":8,\"blocks\":1}" --worker ${socket} --quiet)
execute_process(COMMAND ${PGMATE} ${run} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^played 2 games .* positions/s, mean batch [0-9.]+, evaluator network 1; ")
  file(READ ${WORK_DIR}/worker.log log)
  pgmate_fail("pgmate ${run}: exit ${rc}; stdout: ${out}; stderr: ${err}; worker log:\n${log}")
endif()
pgmate_check_pgn(${WORK_DIR}/games.pgn 2 "pgmate network 1")
file(READ ${WORK_DIR}/games.pgn games)
if(NOT games MATCHES "evaluator\\\\\": \\\\\"network 1\\\\\"")
  pgmate_fail("the PgmateSelfplay tag does not name the network:\n${games}")
endif()

# Stopped and gone before the test ends (timeout passes SIGTERM on to the worker).
execute_process(COMMAND kill ${worker_pid})
foreach(i RANGE 100)
  execute_process(COMMAND kill -0 ${worker_pid} RESULT_VARIABLE alive ERROR_QUIET)
  if(NOT alive EQUAL 0)
    break()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E sleep 0.1)
endforeach()
if(alive EQUAL 0)
  message(FATAL_ERROR "pgmate-worker (under timeout, pid ${worker_pid}) did not stop on SIGTERM")
endif()
