# Every subcommand answers --help (and -h) with its usage on stdout and exit 0, before
# looking at anything else on its command line.
foreach(cmd perft moves import export selfplay play arena uci generate)
  foreach(flag --help -h)
    execute_process(COMMAND ${PGMATE} ${cmd} --db nowhere ${flag} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: pgmate ${cmd}" OR NOT err STREQUAL "")
      message(FATAL_ERROR "pgmate ${cmd} ${flag}: exit ${rc}; stdout: ${out}; stderr: ${err}")
    endif()
  endforeach()
endforeach()
execute_process(COMMAND ${PGMATE} nosuchcommand --help OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 2 OR NOT err MATCHES "unknown command")
  message(FATAL_ERROR "pgmate nosuchcommand --help: exit ${rc}; stderr: ${err}")
endif()
