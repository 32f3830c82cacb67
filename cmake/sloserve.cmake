include(GoogleTest)

# sloserve_cc_library(NAME name SRCS ... DEPS ...): one folder, one static library.
function(sloserve_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# sloserve_cc_test(NAME name SRCS ... DEPS ... [ONE_PROCESS]): a GoogleTest binary
# registered with CTest, one CTest test per case (per suite with SLOSERVE_CTEST_PER_SUITE);
# ONE_PROCESS registers the binary as one test instead, for binaries whose start-up is
# expensive (LibTorch's initialisers: 0.7 s, 4 s under ASan, which every case would pay
# again).
function(sloserve_cc_test)
  cmake_parse_arguments(ARG "ONE_PROCESS" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_compile_definitions(${ARG_NAME} PRIVATE SLOSERVE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(ARG_ONE_PROCESS)
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT 600)
  elseif(SLOSERVE_CTEST_PER_SUITE)
    # One CTest test per GoogleTest suite, listed after each build (gtest_suite_tests.cmake).
    set(suites "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_suites.cmake")
    add_custom_command(TARGET ${ARG_NAME} POST_BUILD BYPRODUCTS ${suites}
      COMMAND ${CMAKE_COMMAND} -D BIN=$<TARGET_FILE:${ARG_NAME}> -D PREFIX=${ARG_NAME}.
              -D OUT=${suites} -D WORKDIR=${CMAKE_CURRENT_BINARY_DIR}
              -D EXCLUDE=${SLOSERVE_CTEST_EXCLUDE} -D TIMEOUT=600
              -P ${PROJECT_SOURCE_DIR}/cmake/gtest_suite_tests.cmake
      VERBATIM)
    set(include "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}_suites_include.cmake")
    file(WRITE ${include} "if(EXISTS [==[${suites}]==])\n  include([==[${suites}]==])\n"
                          "else()\n  add_test(${ARG_NAME}_NOT_BUILT ${ARG_NAME}_NOT_BUILT)\n"
                          "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include})
  else()
    gtest_discover_tests(${ARG_NAME} TEST_PREFIX "${ARG_NAME}." DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 300)
  endif()
endfunction()
