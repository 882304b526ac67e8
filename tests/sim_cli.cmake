# tests/sim_cli.cmake — acceptance tests of `multilane sim` and `multilane model`.
# Included by the top CMakeLists.txt after tests/cli.cmake (uses multilane_cli_test).
set(sim_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)

# Every bcast algorithm present in the JSON results, at every size, with auto segments.
foreach(algo linear chain binary binomial vandegeijn multilane multilane-sites dbtree site-binomial)
  multilane_cli_test(cli-sim-all-json-${algo} 0 "\"algorithm\": \"${algo}\"" sim
                     --platform ${sim_platforms}/single-site-32.toml --collective bcast
                     --algorithm all --sizes 1KiB,1MiB,64MiB,256MiB --segment auto --json)
endforeach()
multilane_cli_test(cli-sim-json-shape 0 "\"collective\": \"bcast\".*\"results\".*\"segment\".*\"time_s\""
                   sim --platform ${sim_platforms}/single-site-32.toml --algorithm multilane
                   --sizes 1MiB --json)
multilane_cli_test(cli-sim-compare-model 0 "simulated +model +diff" sim
                   --platform ${sim_platforms}/single-site-32.toml --algorithm all --sizes 1MiB
                   --compare-model)
multilane_cli_test(cli-model-table 0 "multilane" model
                   --platform ${sim_platforms}/grid-2x32-wan5ms.toml --collective scatter
                   --algorithm all --sizes 4MiB)
multilane_cli_test(cli-sim-sweep-pairs 0 "4 MiB +32 " sim
                   --platform ${sim_platforms}/grid-2x32-wan5ms.toml --collective scatter
                   --sizes 4MiB --sweep-pairs)

# Bad input: exit status 2 and a message that says what is wrong.
multilane_cli_test(cli-sim-bad-collective 2 "unknown collective \"bcst\".*bcast, scatter" sim
                   --platform ${sim_platforms}/single-site-32.toml --collective bcst --sizes 1KiB)
multilane_cli_test(cli-sim-bad-algorithm 2 "unknown bcast algorithm \"foo\".*multilane" sim
                   --platform ${sim_platforms}/single-site-32.toml --algorithm foo --sizes 1KiB)
multilane_cli_test(cli-sim-bad-size 2 "12XB" sim
                   --platform ${sim_platforms}/single-site-32.toml --sizes 1KiB,12XB)
multilane_cli_test(cli-model-no-closed-form 2 "no closed form" model
                   --platform ${sim_platforms}/two-sites-16x2.toml --algorithm binomial --sizes 1KiB)

# --trace writes trace-event JSON that parses; --plot writes a PNG.
add_test(NAME cli-sim-trace-and-plot
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/sim/check_trace_plot.py
                 $<TARGET_FILE:multilane> ${sim_platforms}/single-site-32.toml
                 ${CMAKE_CURRENT_BINARY_DIR})
