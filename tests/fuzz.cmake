# tests/fuzz.cmake — fuzz targets for the decoders that face the network or a user's file.
#
# Each tests/fuzz/targets/<name>.cpp defines LLVMFuzzerTestOneInput for one decoder and asserts
# its properties (tests/fuzz/fuzz_check.hpp): no crash, a refusal in words, and what is
# accepted encodes back to itself. tests/fuzz/corpus/<name>/ holds its seed inputs (valid
# messages made with the encoders, platform files from examples/platforms/, and every input a
# fuzzing run found that broke a property, kept as a regression).
#
#   every build    fuzz_replay_<name> runs the target once on each corpus file (replay_main.cpp)
#                  as the ctest fuzz-replay-<name>: deterministic, also under ASan+UBSan
#   MULTILANE_FUZZ clang only (`make fuzz`): fuzz_<name>, linked with libFuzzer, with the
#                  libraries instrumented for coverage (CMakeLists.txt); target `fuzz` builds
#                  them, and `make fuzz-run` fuzzes each (scripts/fuzz-run.sh)
file(GLOB fuzz_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/targets/*.cpp)
if(MULTILANE_FUZZ)
  add_custom_target(fuzz)
endif()
foreach(source IN LISTS fuzz_sources)
  get_filename_component(name ${source} NAME_WE)
  if(MULTILANE_FUZZ)
    set(target fuzz_${name})
    add_executable(${target} EXCLUDE_FROM_ALL ${source})
    target_link_options(${target} PRIVATE -fsanitize=fuzzer)
    add_dependencies(fuzz ${target})
  else()
    set(target fuzz_replay_${name})
    add_executable(${target} ${source} ${CMAKE_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
    string(REPLACE "_" "-" test_name ${name})
    add_test(NAME fuzz-replay-${test_name}
             COMMAND ${target} ${CMAKE_SOURCE_DIR}/tests/fuzz/corpus/${name})
    set_tests_properties(fuzz-replay-${test_name} PROPERTIES TIMEOUT 120 LABELS fuzz
                                                             PASS_REGULAR_EXPRESSION "none failed")
  endif()
  set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
  target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/tests)
  target_link_libraries(${target} PRIVATE multilane::core multilane::runtime multilane::wan)
endforeach()
