# tests/wan_cli.cmake — programs written against the WAN layer's public C and MPWide headers,
# built here and run by the tests (the MPWide program by test_wan, which starts its two or
# three processes), plus the command-line tests of relay, router, serve and cp.
if(NOT TARGET multilane::wan)
  return()
endif()

# The channels API from C: compiled as C to prove the header is C.
enable_language(C)
add_executable(channels_c_example ${CMAKE_SOURCE_DIR}/tests/wan/programs/channels_c_example.c)
target_link_libraries(channels_c_example PRIVATE multilane::wan)
set_target_properties(channels_c_example PROPERTIES LINKER_LANGUAGE CXX)
add_test(NAME wan-channels-c-example
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=^channels_c_example: ok"
                 -P ${MULTILANE_EXPECT} -- $<TARGET_FILE:channels_c_example>)
set_tests_properties(wan-channels-c-example PROPERTIES TIMEOUT 60)

# An MPWide program, unchanged but for the header; test_wan runs it (MpwideCompat tests).
add_executable(mpwide_ping ${CMAKE_SOURCE_DIR}/tests/wan/programs/mpwide_ping.cpp)
target_link_libraries(mpwide_ping PRIVATE multilane::wan)
if(TARGET test_wan)
  add_dependencies(test_wan mpwide_ping)
endif()
