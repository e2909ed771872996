# fuzz/options_test.cmake: ctest check of a target's .options file and the dictionary it names.
#   -DOPTIONS=fuzz/T.options   always: every dictionary line is in libFuzzer's syntax (a quoted
#                              string of printable ASCII whose only escapes are \\, \" and \xAB,
#                              optionally named `name=`); libFuzzer rejects the whole file at the
#                              first line that is not, and a fuzz run then exits at once.
#   -DFUZZER=path              with a libFuzzer build: the target itself starts with every flag of
#                              the .options file (as fuzz/ci-fuzz.sh and ClusterFuzzLite pass
#                              them) and -runs=0 on an empty corpus, and must exit 0.
#   -DWORK=dir                 scratch for the empty corpus.
cmake_minimum_required(VERSION 3.20)  # policies of this century (quoted "dict" is a string)
get_filename_component(fuzz_dir ${OPTIONS} DIRECTORY)
file(STRINGS ${OPTIONS} option_lines)
set(flags "")
set(dict "")
foreach(line IN LISTS option_lines)
  if(line MATCHES "^[ \t]*([a-z_]+)[ \t]*=[ \t]*(.*[^ \t])[ \t]*$")
    set(key ${CMAKE_MATCH_1})
    set(value ${CMAKE_MATCH_2})
    if(key STREQUAL "dict")
      set(value ${fuzz_dir}/${value})
      set(dict ${value})
    endif()
    list(APPEND flags -${key}=${value})
  endif()
endforeach()

if(dict)
  # file(STRINGS) would drop lines with control bytes silently; read the bytes as lines instead.
  file(READ ${dict} text HEX)
  if(text MATCHES "(^|0a)(0[0-8]|0[b-f]|1[0-9a-f]|7f)")
    message(FATAL_ERROR "${dict}: a control byte outside a \\xAB escape")
  endif()
  # One list element per line. A CMake list does not split inside unbalanced brackets, and `;`
  # separates elements: neither matters to the syntax checked here, so they become `_`.
  file(READ ${dict} text)
  string(REGEX REPLACE "[][;]" "_" text "${text}")
  string(REPLACE "\n" ";" dict_lines "${text}")
  set(n 0)
  foreach(line IN LISTS dict_lines)
    math(EXPR n "${n} + 1")
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([A-Za-z0-9_]+=)?\"([^\"\\\\]|\\\\\\\\|\\\\\"|\\\\x[0-9A-Fa-f][0-9A-Fa-f])*\"$")
      message(FATAL_ERROR "${dict}:${n}: not a libFuzzer dictionary entry: ${line}")
    endif()
  endforeach()
  message(STATUS "${dict}: ${n} lines in libFuzzer's syntax")
endif()

if(FUZZER)
  set(empty ${WORK}/options_test_empty_corpus)
  file(REMOVE_RECURSE ${empty})
  file(MAKE_DIRECTORY ${empty})
  execute_process(COMMAND ${FUZZER} ${flags} -runs=0 ${empty}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${FUZZER} ${flags} -runs=0 exited ${rc}:\n${out}")
  endif()
  if(dict AND NOT out MATCHES "Dictionary: [1-9][0-9]* entries")
    message(FATAL_ERROR "${FUZZER} did not load ${dict}:\n${out}")
  endif()
endif()
