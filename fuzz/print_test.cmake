# fuzz/print_test.cmake: ctest check of the crash-to-program path (fuzz/ci-fuzz.sh): the
# program_fuzzer replay driver's --print turns fuzz bytes into a form-1 program, which the
# text_program_fuzzer replay driver must read and pass.
execute_process(COMMAND ${REPLAY} --print ${INPUT} OUTPUT_FILE ${WORK}/print_test.txt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--print failed (${rc})")
endif()
file(READ ${WORK}/print_test.txt text)
if(NOT text MATCHES "ExportedProgram:")
  message(FATAL_ERROR "--print wrote no form-1 program:\n${text}")
endif()
execute_process(COMMAND ${TEXT_REPLAY} ${WORK}/print_test.txt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the printed program fails text_program_fuzzer (${rc})")
endif()
