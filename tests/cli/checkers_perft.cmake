# `pgmate perft --game checkers`: counts, divide lines in move notation, the longest rule,
# and bad input (message on stderr, exit 2, nothing on stdout).
execute_process(COMMAND ${PGMATE} perft --game checkers startpos 6 OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "36768")
  message(FATAL_ERROR "pgmate perft --game checkers startpos 6: '${out}' (exit ${rc})")
endif()

execute_process(COMMAND ${PGMATE} perft --game checkers --divide startpos 3 OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pgmate perft --game checkers --divide exited ${rc}")
endif()
string(REGEX MATCHALL "[0-9]+-[0-9]+: [0-9]+" lines "${out}")
list(LENGTH lines n)
if(NOT n EQUAL 7 OR NOT out MATCHES "^9-13: [0-9]+\n" OR NOT out MATCHES "\n12-16: [0-9]+\n")
  message(FATAL_ERROR "expected 7 divide lines from 9-13 to 12-16, got ${n}:\n${out}")
endif()
string(STRIP "${out}" stripped)
string(REGEX MATCH "[^\n]+$" last "${stripped}")
if(NOT last STREQUAL "302")
  message(FATAL_ERROR "last line should be 302, got '${last}'")
endif()

# A position as a PDN FEN, jumps in divide with their full path, threads, the longest rule.
execute_process(COMMAND ${PGMATE} perft --game checkers --divide "B:W14,15,16,22:B10,12" 1
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "10x17x26: 1\n10x19: 1\n12x19: 1\n\n3\n")
  message(FATAL_ERROR "divide of a capture position: '${out}' (exit ${rc})")
endif()
execute_process(COMMAND ${PGMATE} perft --game checkers --rule longest "B:W14,15,16,22:B10,12" 1
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "1")
  message(FATAL_ERROR "--rule longest: '${out}' (exit ${rc})")
endif()
execute_process(COMMAND ${PGMATE} perft --game checkers --threads 2 startpos 7 OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "179740")
  message(FATAL_ERROR "--threads 2 startpos 7: '${out}' (exit ${rc})")
endif()

# Chess stays the default.
execute_process(COMMAND ${PGMATE} perft startpos 2 OUTPUT_VARIABLE out RESULT_VARIABLE rc)
string(STRIP "${out}" out)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "400")
  message(FATAL_ERROR "pgmate perft startpos 2 (chess): '${out}' (exit ${rc})")
endif()

foreach(case "perft;--game;checkers;B:W21,33:B1;3|square \"33\" at offset 6 is out of range 1-32"
             "perft;--game;checkers;B:W21:B30;3|a black man cannot stand on its crowning row"
             "perft;--game;checkers;rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1;2|invalid checkers FEN"
             "perft;--game;go;startpos;2|--game must be chess or checkers"
             "perft;--rule;longest;startpos;2|--rule is for --game checkers"
             "perft;--game;checkers;--rule;most;startpos;2|--rule must be any or longest")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts -1 needle)
  list(REMOVE_AT parts -1)
  execute_process(COMMAND ${PGMATE} ${parts} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "")
    message(FATAL_ERROR "pgmate ${parts}: expected exit 2 and no stdout, got ${rc}; stdout: ${out}; stderr: ${err}")
  endif()
  string(FIND "${err}" "${needle}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "pgmate ${parts}: stderr does not say '${needle}': ${err}")
  endif()
endforeach()
