# tests/cli.cmake — command-line acceptance tests, included by the top CMakeLists.txt.
#
# Each test runs the real `multilane` binary through tests/expect.cmake, which checks the exit
# status and a regular expression on the output (see the top of that file). Helper:
#
#   multilane_cli_test(NAME EXIT REGEX ARGS...)   runs `multilane ARGS...`
set(MULTILANE_EXPECT ${CMAKE_CURRENT_LIST_DIR}/expect.cmake)

function(multilane_cli_test name exit regex)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=${exit} "-DEXPECT_OUTPUT=${regex}"
                   -P ${MULTILANE_EXPECT} -- $<TARGET_FILE:multilane> ${ARGN})
endfunction()

# Escapes the characters a CMake regular expression treats specially.
function(multilane_regex_escape out text)
  string(REGEX REPLACE "([][.*+?^$()|\\\\])" "\\\\\\1" escaped "${text}")
  set(${out} "${escaped}" PARENT_SCOPE)
endfunction()

# ---- platform: show every example, reject every malformed example with its FILE:LINE: key ----
set(platform_dir ${CMAKE_SOURCE_DIR}/examples/platforms)
file(GLOB platform_examples CONFIGURE_DEPENDS ${platform_dir}/*.toml)
foreach(path IN LISTS platform_examples)
  get_filename_component(stem ${path} NAME_WE)
  multilane_cli_test(cli-platform-show-${stem} 0 "^platform ${stem} .*placement: " platform show
                     ${path})
endforeach()

file(GLOB platform_bad_examples CONFIGURE_DEPENDS ${platform_dir}/bad/*.toml)
foreach(path IN LISTS platform_bad_examples)
  get_filename_component(stem ${path} NAME_WE)
  # Line 2 of each malformed file reads `# expect: LINE: key: reason`.
  file(STRINGS ${path} expect_line REGEX "^# expect: ")
  string(REGEX REPLACE "^# expect: ([0-9]+: [^:]+):.*" "\\1" line_and_key "${expect_line}")
  multilane_regex_escape(expected "${path}:${line_and_key}: ")
  multilane_cli_test(cli-platform-show-bad-${stem} 2 "${expected}" platform show ${path})
endforeach()

multilane_cli_test(cli-platform-show-missing-file 2 "nonexistent\\.toml: cannot open: " platform
                   show ${CMAKE_BINARY_DIR}/nonexistent.toml)

# probe needs an MPI launcher (or --emu) and says so; its options are range-checked. Under mpirun
# and on an emulated grid it is tested by tests/mpi.cmake and tests/emu/.
multilane_cli_test(cli-platform-probe-without-mpi 2
                   "platform probe measures between the ranks of an MPI job: run it under mpirun"
                   platform probe)
multilane_cli_test(cli-platform-probe-bad-streams 2 "--streams: Value 0 not in range 1 to 64"
                   platform probe --streams 0)
multilane_cli_test(cli-platform-probe-bad-seconds 2 "--seconds: Value 100 not in range" platform
                   probe --seconds 100)

# generate writes a file that show then reads (a fixture orders the two).
set(generated_platform ${CMAKE_BINARY_DIR}/cli-generated-platform.toml)
multilane_cli_test(cli-platform-generate 0 "" platform generate --sites 3 --nodes 5 --lanes 2
                   --cores 4 --wan-connection-bandwidth 250Mbit/s --output ${generated_platform})
set_tests_properties(cli-platform-generate PROPERTIES FIXTURES_SETUP generated_platform)
multilane_cli_test(cli-platform-show-generated 0
                   "3 sites, 15 nodes, 60 ranks.*at most 250 Mbit/s per connection" platform show
                   ${generated_platform})
set_tests_properties(cli-platform-show-generated PROPERTIES FIXTURES_REQUIRED generated_platform)
multilane_cli_test(cli-platform-generate-stdout 0 "name = \"generated-2x16x2x1\"" platform
                   generate)
multilane_cli_test(cli-platform-generate-bad-sites 2 "--sites: Value 0 not in range 1 to 4096"
                   platform generate --sites 0)
multilane_cli_test(cli-platform-generate-bad-bandwidth 2
                   "--lane-bandwidth: bandwidth \"1Gbit\" does not parse" platform generate
                   --lane-bandwidth 1Gbit)

# The docs agree: every measured figure of a doc stands in docs/performance.md, and no doc
# tells history (tests/docs/check_figures.py).
find_program(MULTILANE_CHECK_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(MULTILANE_CHECK_PYTHON3)
  add_test(NAME docs-figures-stand-in-performance
           COMMAND ${MULTILANE_CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/docs/check_figures.py
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(docs-figures-stand-in-performance PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "every figure stands in docs/performance.md")
  # The folders of src/ include each other in one direction, the runtime's in its layer order
  # (tests/layers/check_includes.py).
  add_test(NAME layers-includes-follow-the-layers
           COMMAND ${MULTILANE_CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/layers/check_includes.py
                   ${CMAKE_SOURCE_DIR})
  set_tests_properties(layers-includes-follow-the-layers PROPERTIES TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "the folders' includes follow the layers")
endif()

# docs/mpi.md's "Across two sites, step by step" runs as written on an emulated grid (root
# only: it brings up network namespaces; the libraries must be the plain build's).
if(TARGET multilane_mpi AND NOT MULTILANE_SANITIZE)
  add_test(NAME docs-two-sites-guide
           COMMAND ${CMAKE_SOURCE_DIR}/tests/docs/two_sites_guide.sh ${CMAKE_SOURCE_DIR}
                   ${CMAKE_BINARY_DIR})
  set_tests_properties(docs-two-sites-guide PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE
                       PASS_REGULAR_EXPRESSION "the guide ran as written"
                       SKIP_REGULAR_EXPRESSION "skipped: ")
endif()
