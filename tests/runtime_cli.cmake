# tests/runtime_cli.cmake — the real runtime in real processes over loopback (issue 4's
# acceptance): every collective and algorithm byte-checked on 1..9 ranks, point-to-point
# throughput per stream count, the examples under `multilane launch`, and a rank killed in the
# middle of a broadcast.

# Every collective and algorithm, --check (every byte on every rank), n = 1..9, sizes 0, 1,
# 4097 and 1 MiB + 3. One timed call each: these test correctness, not speed. Under the
# sanitizers (where each run costs ten times as much) a sample of n: the plain run covers each.
if(MULTILANE_SANITIZE)
  set(runtime_check_ranks 1 2 3 5 8)
  set(runtime_check_reduction_ranks 1 2 4 7)
else()
  set(runtime_check_ranks 1 2 3 4 5 6 7 8 9)
  set(runtime_check_reduction_ranks 1 2 3 4 7 9)
endif()
foreach(n IN LISTS runtime_check_ranks)
  foreach(collective IN ITEMS bcast scatter gather allgather alltoall)
    multilane_cli_test(cli-runtime-check-${collective}-n${n} 0
                       "${collective} on ${n} ranks .*1048579 B .* ok\n"
                       bench -n ${n} --collective ${collective} --algorithm all
                       --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1
                       --timeout 60)
  endforeach()
endforeach()

# Every reduction algorithm, --check (every element on every rank against a reference computed
# in the test), each collective with its own element type and operation; sizes in bytes are cut
# to whole elements (4097 B of floats is 1024 of them: 4096 B).
foreach(n IN LISTS runtime_check_reduction_ranks)
  multilane_cli_test(cli-runtime-check-allreduce-n${n} 0
                     "allreduce on ${n} ranks .*1 MiB .* ok\n"
                     bench -n ${n} --collective allreduce --algorithm all --type float --op sum
                     --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1 --timeout 60)
  multilane_cli_test(cli-runtime-check-reduce-n${n} 0
                     "reduce on ${n} ranks .*1 MiB .* ok\n"
                     bench -n ${n} --collective reduce --algorithm all --type int32 --op max
                     --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1 --timeout 60)
  multilane_cli_test(cli-runtime-check-reduce-scatter-n${n} 0
                     "reduce-scatter on ${n} ranks .*1 MiB .* ok\n"
                     bench -n ${n} --collective reduce-scatter --algorithm all --type double-int
                     --op minloc --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1
                     --timeout 60)
endforeach()
multilane_cli_test(cli-runtime-bench-bad-op 2
                   "--op bxor applies to integer types only, not float"
                   bench -n 2 --collective allreduce --op bxor)
multilane_cli_test(cli-runtime-bench-unknown-type 2
                   "--type \"quad\" is unknown: choose one of int8, int16"
                   bench -n 2 --collective allreduce --type quad)

multilane_cli_test(cli-runtime-p2p-streams 0 "streams .*\n +1 +8 MiB .* ok\n +4 +8 MiB .* ok\n"
                   bench -n 2 --p2p --streams 1,4 --size 8MiB --repetitions 2 --check)
# Ping-pong between ranks 0 and 1 with a third rank in the barriers only; both directions'
# bytes are checked.
multilane_cli_test(cli-runtime-pingpong 0 "8 B +pingpong .* ok\n +100 KB +pingpong .* ok\n"
                   bench -n 3 --pingpong --sizes 8,100000 --repetitions 2 --check)
multilane_cli_test(cli-runtime-pingpong-one-rank 2 "--pingpong needs -n 2 or more"
                   bench -n 1 --pingpong)
multilane_cli_test(cli-runtime-bench-bad-algorithm 2
                   "--algorithm: unknown bcast algorithm \"fastest\": choose all, auto or one of linear, chain"
                   bench -n 2 --collective bcast --algorithm fastest)
multilane_cli_test(cli-runtime-bench-bad-root 2 "--root 4 is out of range: must be 0\\.\\.3"
                   bench -n 4 --root 4)

# The examples, one per collective, each checking its own result.
foreach(example IN ITEMS bcast scatter gather allgather alltoall allreduce send_recv c_bcast
                        c_allreduce c_uneven)
  add_test(NAME cli-runtime-example-${example}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=rank 3 ok"
                   "-DREJECT_OUTPUT=WRONG" -P ${MULTILANE_EXPECT} --
                   $<TARGET_FILE:multilane> launch -n 4 --timeout 30 --
                   $<TARGET_FILE:example_${example}> 100003)
endforeach()
# The C example's buffer comes from ml_alloc_shared: with the ranks on one node, hier-shm's
# group bcast copies it once, through the other ranks' mappings of it.
add_test(NAME cli-runtime-example-c_bcast-shared-memory
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=rank 3 ok"
                 "-DREJECT_OUTPUT=WRONG" -P ${MULTILANE_EXPECT} --
                 $<TARGET_FILE:multilane> launch -n 4 --timeout 30
                 --platform ${CMAKE_SOURCE_DIR}/examples/platforms/smp-1x4.toml --
                 $<TARGET_FILE:example_c_bcast> 100003 hier-shm)

# A rank that dies by SIGKILL at a named point (tests/runtime/programs/dying_rank.cpp, no
# timer): the launcher names it and exits non-zero, and the ranks that were waiting for it fail
# naming it and the kind. (The launcher exits with the status of the first rank it saw fail: 137
# for the killed one, or the kind's status for a rank that noticed first: 4 for a peer gone, 3
# for a timeout.)
#   - after its 3rd completed broadcast of 4 MiB: the ones talking to it at once, the others
#     within the 5 s timeout;
#   - before it joins, while the others set up: they fail waiting for its addresses, naming it.
add_executable(dying_rank ${CMAKE_SOURCE_DIR}/tests/runtime/programs/dying_rank.cpp)
target_link_libraries(dying_rank PRIVATE multilane::runtime)
add_test(NAME cli-runtime-rank-killed-mid-broadcast
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                 "-DEXPECT_OUTPUT=(rank 2 \\(pid [0-9]+\\) was killed by signal 9.*peer gone: [^\n]*(rank 2 closed its connections|to rank 2 failed))|(peer gone: [^\n]*(rank 2 closed its connections|to rank 2 failed).*rank 2 \\(pid [0-9]+\\) was killed by signal 9)"
                 "-DREJECT_OUTPUT=ok\n"
                 -P ${MULTILANE_EXPECT} --
                 $<TARGET_FILE:multilane> launch -n 4 --timeout 5 --
                 $<TARGET_FILE:dying_rank> 2 calls 3)
add_test(NAME cli-runtime-rank-killed-in-set-up
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                 "-DEXPECT_OUTPUT=(rank 2 \\(pid [0-9]+\\) was killed by signal 9.*timeout: [^\n]*rank 2 has not published its addresses)|(timeout: [^\n]*rank 2 has not published its addresses.*rank 2 \\(pid [0-9]+\\) was killed by signal 9)"
                 "-DREJECT_OUTPUT=ok\n"
                 -P ${MULTILANE_EXPECT} --
                 $<TARGET_FILE:multilane> launch -n 4 --timeout 5 --
                 $<TARGET_FILE:dying_rank> 2 setup)
set_tests_properties(cli-runtime-rank-killed-mid-broadcast cli-runtime-rank-killed-in-set-up
                     PROPERTIES TIMEOUT 120)

# MULTILANE_PORTS: a job runs with its ranks listening in the range, and a malformed range is
# refused naming the variable.
multilane_cli_test(cli-runtime-ports-in-range 0 "bcast on 2 ranks .* ok\n"
                   bench -n 2 --collective bcast --algorithm binomial --sizes 1MiB --check
                   --repetitions 1 --iterations 1)
set_tests_properties(cli-runtime-ports-in-range PROPERTIES ENVIRONMENT "MULTILANE_PORTS=24100-24199")
multilane_cli_test(cli-runtime-ports-malformed nonzero
                   "MULTILANE_PORTS=9-3: must be LOW-HIGH, two port numbers with 1 <= LOW <= HIGH <= 65535"
                   bench -n 2 --collective bcast --algorithm binomial --sizes 1KiB
                   --repetitions 1 --iterations 1)
set_tests_properties(cli-runtime-ports-malformed PROPERTIES ENVIRONMENT "MULTILANE_PORTS=9-3")
# Two ranks of one host cannot both listen on a range of one port: the range is honoured.
multilane_cli_test(cli-runtime-ports-too-few nonzero
                   "cannot listen on lane 0 address 127\\.0\\.0\\.1: no free port in 24250-24250 \\(MULTILANE_PORTS\\)"
                   bench -n 2 --collective bcast --algorithm binomial --sizes 1KiB
                   --repetitions 1 --iterations 1)
set_tests_properties(cli-runtime-ports-too-few PROPERTIES ENVIRONMENT "MULTILANE_PORTS=24250-24250")
