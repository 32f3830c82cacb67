include(GoogleTest)

# sloserve_cc_library(NAME name SRCS ... DEPS ...): one folder, one static library.
function(sloserve_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# sloserve_cc_test(NAME name SRCS ... DEPS ... [ONE_PROCESS]): a GoogleTest binary
# registered with CTest, one CTest test per case; ONE_PROCESS registers the binary as one
# test instead, for binaries whose start-up is expensive (LibTorch's initialisers: 0.7 s,
# 4 s under ASan, which every case would pay again).
function(sloserve_cc_test)
  cmake_parse_arguments(ARG "ONE_PROCESS" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main Threads::Threads)
  target_compile_definitions(${ARG_NAME} PRIVATE SLOSERVE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  if(ARG_ONE_PROCESS)
    add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
    set_tests_properties(${ARG_NAME} PROPERTIES TIMEOUT 600)
  else()
    gtest_discover_tests(${ARG_NAME} TEST_PREFIX "${ARG_NAME}." DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 300)
  endif()
endfunction()
