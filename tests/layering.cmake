# tests/layering.cmake: DESIGN §1's dependency direction, checked on the sources and on the
# library targets (ctest runs it as Layering.DependenciesPointOneWay):
#
#   core <- oracle, gen, proofs <- draw <- campaign <- fuzz, cli, tests, bench
#   core <- passcmd <- campaign, cli (the pass under test as a child process)
#
# (draw/ reads the oracle's verdicts and the ordering proof's violations: it sits above proofs/.)
#
# - every `#include "DIR/..."` of a directory names DIR itself or a directory it may depend on;
# - every wbcheck_* library a library target links is one it may depend on (LINKS_<dir> holds
#   the target's INTERFACE_LINK_LIBRARIES, joined with '|', as tests/CMakeLists.txt passes
#   them: a static library's PUBLIC and PRIVATE links both show there).
#
#   cmake -DSOURCE_DIR=<repo> -DLINKS_gen=wbcheck_core ... -P tests/layering.cmake
cmake_minimum_required(VERSION 3.22)

set(allowed_core "")
set(allowed_oracle core)
set(allowed_gen core)
set(allowed_passcmd core)
set(allowed_proofs core oracle)
set(allowed_draw core oracle proofs)
set(allowed_campaign core oracle gen proofs draw passcmd)
set(allowed_fuzz core oracle gen proofs draw campaign passcmd)
set(allowed_cli core oracle gen proofs draw campaign passcmd)
set(checked core oracle gen passcmd proofs draw campaign fuzz cli)
set(libraries core oracle gen passcmd proofs draw campaign)

set(violations "")
foreach(dir ${checked})
  file(GLOB sources ${SOURCE_DIR}/${dir}/*.h ${SOURCE_DIR}/${dir}/*.cpp)
  foreach(source ${sources})
    file(STRINGS ${source} includes REGEX "^#include \"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" included "${line}")
      if(NOT included STREQUAL dir AND NOT included IN_LIST allowed_${dir})
        file(RELATIVE_PATH where ${SOURCE_DIR} ${source})
        list(APPEND violations "${where}: ${line} (${dir}/ may include ${allowed_${dir}})")
      endif()
    endforeach()
  endforeach()
endforeach()

foreach(dir ${libraries})
  if(NOT DEFINED LINKS_${dir})
    list(APPEND violations "wbcheck_${dir}: its link libraries were not passed (LINKS_${dir})")
    continue()
  endif()
  string(REPLACE "|" ";" links "${LINKS_${dir}}")
  foreach(link ${links})
    if(link MATCHES "wbcheck_([a-z_]+)")
      set(linked ${CMAKE_MATCH_1})
      if(NOT linked IN_LIST allowed_${dir})
        list(APPEND violations "wbcheck_${dir} links ${link} (${dir}/ may depend on ${allowed_${dir}})")
      endif()
    endif()
  endforeach()
endforeach()

if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "dependencies against DESIGN §1:\n  ${text}")
endif()
message(STATUS "dependencies point one way")
