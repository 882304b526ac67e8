# bench/mpi.cmake — mpi_peer: Open MPI's MPI_Bcast / MPI_Scatter / MPI_Gather / MPI_Allgather /
# MPI_Alltoall timed with the method of `multilane bench`, printing its JSON, for the side-by-side
# tables of docs/performance.md ("Runtime over TCP (loopback)", bench/compare-openmpi.sh).
# A plain C program against MPI's C API; needs Debian's Open MPI (libopenmpi-dev).
enable_language(C)
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
find_package(MPI COMPONENTS C)
if(NOT MPI_C_FOUND)
  message(STATUS "MPI (libopenmpi-dev) not found: mpi_peer is not built")
  return()
endif()

add_executable(mpi_peer mpi_peer.c)
target_link_libraries(mpi_peer PRIVATE MPI::MPI_C)
# The MPI library's small calls right after a multilane job's set-up (docs/performance.md).
add_executable(after_setup after_setup.c)
target_link_libraries(after_setup PRIVATE MPI::MPI_C)
# What the PMPI library adds to a call it leaves to the MPI library (bench/pass-through.sh).
add_executable(pass_through pass_through.c)
target_link_libraries(pass_through PRIVATE MPI::MPI_C)
if(TARGET PkgConfig::MULTILANE_MPICH)  # src/mpi/CMakeLists.txt: MPICH's compile and link flags
  add_executable(pass_through_mpich pass_through.c)
  target_link_libraries(pass_through_mpich PRIVATE PkgConfig::MULTILANE_MPICH)
endif()

# Not a timing test: two ranks, tiny sizes, --check. The output must be the JSON the comparison
# script reads (one row per size, one time per repetition, every byte verified) and a bad
# argument must give a clear message and exit status 2.
find_program(MULTILANE_MPIEXEC NAMES mpirun mpiexec HINTS ${MPIEXEC_EXECUTABLE})
find_program(MULTILANE_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT MULTILANE_MPIEXEC OR NOT MULTILANE_PYTHON3)
  message(STATUS "mpirun or /usr/bin/python3 missing: the mpi_peer tests are skipped")
  return()
endif()
# Root in a container: Open MPI refuses to start without these; --oversubscribe: 2 cores may be
# fewer than the ranks; loopback TCP as in the comparison.
set(mpi_peer_launch ${MULTILANE_MPIEXEC} --oversubscribe --allow-run-as-root --bind-to none
                    --mca btl tcp,self --mca btl_tcp_if_include lo)
set(mpi_peer_json_check [=[
import json, sys
doc = json.load(sys.stdin)
assert doc["kind"] == "collective" and doc["collective"] == "alltoall" and doc["ranks"] == 2, doc
sizes = [row["size"] for row in doc["results"]]
assert sizes == [0, 1, 4097, 1024], sizes
for row in doc["results"]:
    assert row["algorithm"] == "openmpi", row
    assert row["iterations"] == 3 and len(row["times_s"]) == 3, row
    assert all(t >= 0 for t in row["times_s"]) and row["median_s"] >= 0, row
    assert row["checked"] is True and row["check_ok"] is True, row
print("mpi_peer JSON ok")
]=])
add_test(NAME mpi-peer-json
         COMMAND sh -c "\"$0\" \"$@\" | ${MULTILANE_PYTHON3} -c '${mpi_peer_json_check}'"
                 ${mpi_peer_launch} -n 2 $<TARGET_FILE:mpi_peer> --collective alltoall --sizes
                 0,1,4097,1KiB --iterations 3 --repetitions 3 --check)
set_tests_properties(mpi-peer-json PROPERTIES TIMEOUT 60 PASS_REGULAR_EXPRESSION "mpi_peer JSON ok")
# --threads: two threads of each rank, each on its own communicator, every element checked.
add_test(NAME mpi-peer-threads
         COMMAND ${mpi_peer_launch} -n 2 $<TARGET_FILE:mpi_peer> --collective allreduce --sizes
                 4KiB,64KiB --iterations 3 --repetitions 2 --threads 2 --check)
set_tests_properties(mpi-peer-threads PROPERTIES TIMEOUT 60
                     PASS_REGULAR_EXPRESSION "\"threads\": 2.*\"size\": 65536.*\"check_ok\": true"
                     FAIL_REGULAR_EXPRESSION "\"check_ok\": false")
add_test(NAME mpi-peer-bad-size
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2 "-DEXPECT_OUTPUT=size \"12XB\" does not parse"
                 -P ${MULTILANE_EXPECT} -- ${mpi_peer_launch} -n 2 $<TARGET_FILE:mpi_peer>
                 --sizes 1,12XB)
set_tests_properties(mpi-peer-bad-size PROPERTIES TIMEOUT 60)
# A bench program's two tests: `name` runs it on 2 ranks with `run_args` (a list) and its output
# must match `pass`; `name`-bad-`what` gives it 0 and must name the argument and its range.
function(add_bench_program_tests name program run_args pass what message)
  add_test(NAME ${name} COMMAND ${mpi_peer_launch} -n 2 $<TARGET_FILE:${program}> ${run_args})
  set_tests_properties(${name} PROPERTIES TIMEOUT 60 PASS_REGULAR_EXPRESSION "${pass}")
  add_test(NAME ${name}-bad-${what}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2 "-DEXPECT_OUTPUT=${message}" -P
                   ${MULTILANE_EXPECT} -- $<TARGET_FILE:${program}> 0)
  set_tests_properties(${name}-bad-${what} PROPERTIES TIMEOUT 60)
endfunction()
# after_setup: the set-up call's time and one mean per block.
add_bench_program_tests(
  mpi-after-setup after_setup "3;5"
  "set-up call [0-9.]+ us; blocks of 5 calls \\(us per call\\): [0-9.]+ [0-9.]+ [0-9.]+\n"
  blocks "after_setup: BLOCKS must be 1..10000, not '0'")
# pass_through: both lines, each a time per call.
add_bench_program_tests(
  mpi-pass-through pass_through "1000;2"
  "reduce_scatter_block of 0 elements: [0-9.]+ ns\nallreduce of 1 float, decided for the MPI library: [0-9.]+ ns\niallreduce of 1 float and its wait, decided: [0-9.]+ ns\nallreduce of 1 float on MPI_COMM_SELF, decided, caches cold: [0-9.]+ ns\n"
  calls "pass_through: CALLS must be 1..100000000, not '0'")
if(MULTILANE_SANITIZE)
  # Open MPI never frees what MPI_Init allocates, and unloads its plugins before LeakSanitizer
  # runs, so those leaks cannot even be suppressed by library name. AddressSanitizer and
  # UndefinedBehaviorSanitizer still check every access of mpi_peer.
  set_tests_properties(mpi-peer-json mpi-peer-bad-size mpi-peer-threads mpi-after-setup
                       mpi-pass-through PROPERTIES ENVIRONMENT ASAN_OPTIONS=detect_leaks=0)
endif()
