# tests/expect.cmake — run a command and check its exit status and output.
#
# Usage (as a CTest command; everything after `--` is the command to run):
#
#   add_test(NAME my-test COMMAND ${CMAKE_COMMAND}
#            -DEXPECT_EXIT=2 "-DEXPECT_OUTPUT=file.toml:9: site\\[0\\]"
#            -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake -- $<TARGET_FILE:multilane> platform show x)
#
#   EXPECT_EXIT    exit status the command must return (default 0), or `nonzero`
#   EXPECT_OUTPUT  CMake regular expression that stdout + stderr must match (optional)
#   REJECT_OUTPUT  CMake regular expression that stdout + stderr must NOT match (optional)
#
# The test fails with a message showing the command, its status and its output. A regular
# expression must not contain a semicolon (CMake would split the argument there).
cmake_minimum_required(VERSION 3.25)

set(command "")
set(after_separator FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator TRUE)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "expect.cmake: no command given after --")
endif()
if(NOT DEFINED EXPECT_EXIT)
  set(EXPECT_EXIT 0)
endif()

execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(output "${out}${err}")
string(REPLACE ";" " " shown "${command}")

set(problems "")
if(EXPECT_EXIT STREQUAL "nonzero")
  if(status STREQUAL "0" OR NOT status MATCHES "^[0-9]+$")
    string(APPEND problems "exit status ${status}, expected a non-zero status\n")
  endif()
elseif(NOT status STREQUAL EXPECT_EXIT)
  string(APPEND problems "exit status ${status}, expected ${EXPECT_EXIT}\n")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT output MATCHES "${EXPECT_OUTPUT}")
  string(APPEND problems "output does not match: ${EXPECT_OUTPUT}\n")
endif()
if(DEFINED REJECT_OUTPUT AND output MATCHES "${REJECT_OUTPUT}")
  string(APPEND problems "output matches what it must not: ${REJECT_OUTPUT}\n")
endif()
if(problems)
  message(FATAL_ERROR "command: ${shown}\n${problems}output:\n${output}")
endif()
message(STATUS "ok: ${shown} (exit ${status})")
