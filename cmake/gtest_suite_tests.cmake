# Run after a test binary is built (sloserve_cc_test, SLOSERVE_CTEST_PER_SUITE): lists its
# GoogleTest cases and writes one CTest test per test suite, `<PREFIX><Suite>` running
# `--gtest_filter=<Suite>.*`, to OUT. Cases whose `<PREFIX><Suite>.<Case>` name matches the
# regex EXCLUDE are left out of their suite's filter (a suite left empty is not added).
#   cmake -D BIN=... -D PREFIX=... -D OUT=... -D WORKDIR=... [-D EXCLUDE=...] [-D TIMEOUT=...]
#         -P gtest_suite_tests.cmake
# Why: under ASan each process costs 0.1-0.2 s to start, paid once per case otherwise
# (docs/ci.md).
cmake_minimum_required(VERSION 3.25)
foreach(var BIN PREFIX OUT WORKDIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "gtest_suite_tests.cmake: -D ${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 600)
endif()

execute_process(COMMAND "${BIN}" --gtest_list_tests WORKING_DIRECTORY "${WORKDIR}" TIMEOUT 60
                OUTPUT_VARIABLE listing RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "gtest_suite_tests.cmake: ${BIN} --gtest_list_tests failed (${result}):\n"
                      "${listing}")
endif()

# The listing: "Suite." lines, each followed by "  Case" lines; parameterised and typed
# ones carry a "  # GetParam() = ..." / "  # TypeParam = ..." comment, dropped here.
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
set(suite "")
foreach(line IN LISTS lines)
  if(line STREQUAL "" OR line MATCHES "^Running main")
    continue()
  endif()
  if(line MATCHES "^  ")
    string(REGEX REPLACE "^ +([^ ]+).*$" "\\1" case "${line}")
    set(excluded OFF)
    if(NOT "${EXCLUDE}" STREQUAL "")
      if("${PREFIX}${suite}.${case}" MATCHES "${EXCLUDE}")
        set(excluded ON)
      endif()
    endif()
    if(excluded)
      list(APPEND excluded_${suite} "${suite}.${case}")
    elseif(NOT suite MATCHES "^DISABLED_" AND NOT case MATCHES "^DISABLED_")
      # (disabled cases do not run under a suite filter either)
      math(EXPR kept_${suite} "${kept_${suite}} + 1")
    endif()
  else()
    string(REGEX REPLACE "\\.( +#.*)?$" "" suite "${line}")
    list(APPEND suites "${suite}")
    set(kept_${suite} 0)
    set(excluded_${suite} "")
  endif()
endforeach()

set(script "")
foreach(suite IN LISTS suites)
  if(kept_${suite} EQUAL 0)
    continue()
  endif()
  set(filter "${suite}.*")
  if(excluded_${suite})
    list(JOIN excluded_${suite} ":" minus)
    string(APPEND filter ":-${minus}")
  endif()
  # Whole-suite names have no brackets or spaces (GoogleTest identifiers and '/').
  string(APPEND script
         "add_test([==[${PREFIX}${suite}]==] [==[${BIN}]==] [==[--gtest_filter=${filter}]==])\n"
         "set_tests_properties([==[${PREFIX}${suite}]==] PROPERTIES"
         " WORKING_DIRECTORY [==[${WORKDIR}]==] TIMEOUT ${TIMEOUT})\n")
endforeach()
file(WRITE "${OUT}" "${script}")
