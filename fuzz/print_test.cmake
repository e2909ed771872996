# fuzz/print_test.cmake: ctest check of the crash-to-program path (fuzz/ci-fuzz.sh): the
# program_fuzzer replay driver's --print turns fuzz bytes into a form-1 program, which the
# replay drivers of the targets over text programs (TEXT_REPLAYS: text_program_fuzzer,
# text_placement_fuzzer, text_memplan_fuzzer, text_model_fuzzer) must read and pass. With
# EXPECTED, the printed program must be that file: the same bytes denote the same program
# whichever compiler built the generator (ctest runs this in build/, g++, and in build-fuzz/,
# clang; an argument order left to the compiler once made them differ).
execute_process(COMMAND ${REPLAY} --print ${INPUT} OUTPUT_FILE ${WORK}/print_test.txt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--print failed (${rc})")
endif()
file(READ ${WORK}/print_test.txt text)
if(NOT text MATCHES "ExportedProgram:")
  message(FATAL_ERROR "--print wrote no form-1 program:\n${text}")
endif()
foreach(replay ${TEXT_REPLAYS})
  execute_process(COMMAND ${replay} ${WORK}/print_test.txt RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the printed program fails ${replay} (${rc})")
  endif()
endforeach()
if(DEFINED EXPECTED)
  file(READ ${EXPECTED} expected)
  if(NOT text STREQUAL expected)
    message(FATAL_ERROR "--print wrote another program than ${EXPECTED}:\n${text}")
  endif()
endif()
