# tests/mpi.cmake — the PMPI library (src/mpi/, docs/mpi.md) under real MPI launchers.
#
# The C programs of tests/mpi/ are built once per MPI family (Open MPI: mpi_test_<name>_ompi,
# MPICH: mpi_test_<name>_mpich, both in build/tests/mpi/) against that family only, and run
#   plain     without the library (the programs' own check of the MPI library),
#   forced    with the library preloaded and MULTILANE_ALGORITHM_<COLL>=auto for every
#             collective, so that every call, even a zero count or a barrier on one node, takes
#             multilane's path,
#   policy    with the library preloaded and its default route policy (small calls on one node
#             stay with MPI, large ones go to multilane),
# on a few rank counts in 1..9 (oversubscribed: CI has 2 cores). Each program checks every
# element and prints "No Errors". Open MPI as root needs --allow-run-as-root.
#
#   linked    with the library linked into the program (its static library before the MPI
#             library) and every call forced, as `forced`.
# The sanitizer builds (ASan+UBSan, and ThreadSanitizer: `make test-tsan`) run the threaded
# program only, linked: preloading sanitizer-built libraries into programs that are not (mpirun's)
# needs the sanitizer's runtime first in the initial library list. The MPI libraries are not
# instrumented: their own frames are suppressed (tests/mpi/tsan.supp), and a report with a
# multilane frame fails the test. The plain build runs the whole suite.
#
# tests/mpi/*.cpp is the GoogleTest binary test_mpi (made by the top CMakeLists.txt like every
# layer's): the library's and the platform probe's parts that need no MPI, compiled into it
# here, in both builds.
if(TARGET test_mpi)
  target_sources(test_mpi PRIVATE src/mpi/route_policy.cpp src/mpi/mpi_library_model.cpp
                                  src/mpi/call_class.cpp src/mpi/measured_route.cpp
                                  src/mpi/route_tuning.cpp src/mpi/placement_key.cpp
                                  src/mpi/settings.cpp src/mpi/dispatch_counters.cpp
                                  src/mpi/caller_cpu.cpp
                                  src/mpi/wrapped_call.cpp src/mpi/platform_match.cpp
                                  src/mpi/host_identity.cpp src/mpi/discovered_platform.cpp
                                  src/mpi/site_clustering.cpp src/mpi/lane_discovery.cpp
                                  tools/probe/link_tests.cpp)
  target_include_directories(test_mpi PRIVATE tools)
endif()
enable_language(C)

find_program(MULTILANE_MPIRUN_OPENMPI mpirun.openmpi)
find_program(MULTILANE_MPIEXEC_MPICH mpiexec.mpich)
set(mpi_test_programs coll_types coll_comms coll_nonblocking coll_reduce coll_v fallback errors
                      thread_multiple served_path v_while_blocked)
set(mpi_forced_env "")
# The v-forms' algorithms that read only each rank's own counts (AlgorithmInfo::own_counts_only).
set(mpi_own_counts_env MULTILANE_ALGORITHM_GATHERV=linear MULTILANE_ALGORITHM_SCATTERV=linear)
# Algorithms that need every rank's counts (auto chooses by them): they travel first.
set(mpi_all_counts_env MULTILANE_ALGORITHM_GATHERV=binomial MULTILANE_ALGORITHM_SCATTERV=binomial
    MULTILANE_ALGORITHM_ALLTOALLV=auto)
foreach(coll IN ITEMS BCAST SCATTER GATHER ALLGATHER ALLTOALL BARRIER REDUCE ALLREDUCE
                     REDUCE_SCATTER_BLOCK REDUCE_SCATTER SCAN EXSCAN GATHERV SCATTERV ALLGATHERV
                     ALLTOALLV)
  list(APPEND mpi_forced_env MULTILANE_ALGORITHM_${coll}=auto)
endforeach()

# mpi_family_test(NAME FAMILY RANKS PROGRAM MODE [VAR=VALUE...] [ARGS program arguments...]
#                 [WRAP command before the program...] [EXPECT regex]): one launch of a program.
# It passes on "No Errors"; with EXPECT, on exit status 0 (the programs exit non-zero on any
# mismatch) and output matching the regular expression (through tests/expect.cmake: the
# launchers forward stdout and stderr separately, so their lines come in no fixed order).
function(mpi_family_test name family ranks program mode)
  cmake_parse_arguments(PARSE_ARGV 5 test "" "EXPECT" "ARGS;WRAP")
  set(env ${test_UNPARSED_ARGUMENTS})
  if(mode STREQUAL "forced" OR mode STREQUAL "policy")
    list(APPEND env "LD_PRELOAD=$<TARGET_FILE:multilane_${family}>")
  endif()
  if(mode STREQUAL "forced" OR mode STREQUAL "linked")
    list(APPEND env ${mpi_forced_env})
  endif()
  if(family STREQUAL "mpi")
    set(command ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root --oversubscribe --bind-to none
                -n ${ranks})
    foreach(assignment IN LISTS env)
      list(APPEND command -x ${assignment})
    endforeach()
    set(binary mpi_test_${program}_ompi)
  else()
    set(command ${MULTILANE_MPIEXEC_MPICH} -n ${ranks})
    foreach(assignment IN LISTS env)
      string(FIND "${assignment}" "=" equals)
      string(SUBSTRING "${assignment}" 0 ${equals} variable)
      math(EXPR value_start "${equals} + 1")
      string(SUBSTRING "${assignment}" ${value_start} -1 value)
      list(APPEND command -genv ${variable} ${value})
    endforeach()
    set(binary mpi_test_${program}_mpich)
  endif()
  if(test_EXPECT)
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=${test_EXPECT}"
                     -P ${MULTILANE_EXPECT} -- ${command} ${test_WRAP} $<TARGET_FILE:${binary}>
                     ${test_ARGS})
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS mpi)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${command} ${test_WRAP} $<TARGET_FILE:${binary}> ${test_ARGS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS mpi PASS_REGULAR_EXPRESSION
                                          "No Errors" FAIL_REGULAR_EXPRESSION "Found [0-9]+ errors")
endfunction()

# ---- The sanitizer builds: the threaded program, linked ----
if(MULTILANE_SANITIZE OR MULTILANE_SANITIZE_THREADS)
  set(sanitizer_env
      # Open MPI unloads its plugins before LeakSanitizer runs, so their leaks cannot be
      # suppressed by library name (bench/mpi.cmake): the plain suite's ASan runs check leaks.
      "ASAN_OPTIONS=detect_leaks=0"
      "UBSAN_OPTIONS=print_stacktrace=1"
      # UCX (MPICH's transport) hooks the allocator and mmap, which the sanitizers own.
      "UCX_MEM_EVENTS=no" "UCX_MEM_MALLOC_HOOKS=no"
      # history_size=5 (1M accesses a thread, 8 MiB): with Debian 12's libtsan and the default
      # (128K), about one run in ten reports a test thread's read() or vector move on its own
      # stack as racing a 1-byte atomic read by another test thread, whose stack TSan cannot
      # restore; the only 1-byte atomic loads in these programs are of static guards and heap
      # objects. The report follows the history's size, not the program: 3 in 29 runs at the
      # default, 1 in 73 at 3, none in 150 at 4 or in 160 at 7.
      "TSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/mpi/tsan.supp:halt_on_error=1:exitcode=66:report_signal_unsafe=0:history_size=5")
  add_custom_target(mpi_sanitized_programs)
  foreach(family IN ITEMS mpi mpich)
    set(suffix ompi)
    set(mpi_target PkgConfig::MULTILANE_OMPI)
    set(launcher ${MULTILANE_MPIRUN_OPENMPI})
    if(family STREQUAL "mpich")
      set(suffix mpich)
      set(mpi_target PkgConfig::MULTILANE_MPICH)
      set(launcher ${MULTILANE_MPIEXEC_MPICH})
    endif()
    if(NOT TARGET multilane_${family}_static OR NOT launcher)
      continue()
    endif()
    set(binary mpi_test_thread_multiple_${suffix})
    add_executable(${binary} tests/mpi/thread_multiple.c)
    # The library first, so that its MPI_* take the program's calls; exported, so that dlsym finds
    # multilane_mpi_counters in the program.
    target_link_libraries(${binary} PRIVATE multilane_${family}_static ${mpi_target})
    set_target_properties(${binary} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                               ${CMAKE_BINARY_DIR}/tests/mpi ENABLE_EXPORTS ON
                                               LINKER_LANGUAGE CXX)
    add_dependencies(mpi_sanitized_programs ${binary})
    mpi_family_test(mpi-${suffix}-threads-sanitized-3 ${family} 3 thread_multiple linked
                    ${sanitizer_env}
                    EXPECT "served by multilane: [1-9][0-9]* blocking, [1-9][0-9]* nonblocking; jobs: 1 made, 4 shared")
    set_tests_properties(mpi-${suffix}-threads-sanitized-3 PROPERTIES
                         LABELS "mpi;threads" TIMEOUT 300
                         FAIL_REGULAR_EXPRESSION "Sanitizer|runtime error")
  endforeach()
  return()
endif()

# ---- Open MPI ----
if(TARGET multilane_mpi AND MULTILANE_MPIRUN_OPENMPI)
  foreach(program IN LISTS mpi_test_programs)
    add_executable(mpi_test_${program}_ompi tests/mpi/${program}.c)
    target_link_libraries(mpi_test_${program}_ompi PRIVATE PkgConfig::MULTILANE_OMPI)
    set_target_properties(mpi_test_${program}_ompi PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                              ${CMAKE_BINARY_DIR}/tests/mpi)
  endforeach()
  mpi_family_test(mpi-ompi-types-plain-4 mpi 4 coll_types plain)
  mpi_family_test(mpi-ompi-types-forced-1 mpi 1 coll_types forced)
  mpi_family_test(mpi-ompi-types-forced-3 mpi 3 coll_types forced)
  mpi_family_test(mpi-ompi-fallback-forced-9 mpi 9 fallback forced)
  mpi_family_test(mpi-ompi-types-policy-4 mpi 4 coll_types policy)
  mpi_family_test(mpi-ompi-comms-plain-3 mpi 3 coll_comms plain)
  mpi_family_test(mpi-ompi-reduce-plain-4 mpi 4 coll_reduce plain)
  mpi_family_test(mpi-ompi-reduce-forced-3 mpi 3 coll_reduce forced)
  mpi_family_test(mpi-ompi-reduce-forced-5 mpi 5 coll_reduce forced)
  # Across two sites (ranks as nodes of the file's sites), reductions go to multilane by policy.
  mpi_family_test(mpi-ompi-reduce-sites-4 mpi 4 coll_reduce policy MULTILANE_EXPLAIN=1
                  MULTILANE_PLATFORM=${CMAKE_SOURCE_DIR}/tests/mpi/two-sites-2x2.toml
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 1
                  EXPECT "MPI_Allreduce 4194316 B \\(2 sites\\), 4 ranks on 4 node\\(s\\): multilane ")
  mpi_family_test(mpi-ompi-comms-forced-6 mpi 6 coll_comms forced)
  mpi_family_test(mpi-ompi-nonblocking-plain-4 mpi 4 coll_nonblocking plain)
  mpi_family_test(mpi-ompi-nonblocking-forced-4 mpi 4 coll_nonblocking forced ARGS free-before-wait)
  mpi_family_test(mpi-ompi-nonblocking-policy-5 mpi 5 coll_nonblocking policy)
  mpi_family_test(mpi-ompi-fallback-forced-5 mpi 5 fallback forced)
  # Served calls allocate nothing and stay on the caller's thread; nonblocking calls keep their
  # datatypes and never wait to set up (tests/mpi/served_path.c).
  mpi_family_test(mpi-ompi-served-forced-4 mpi 4 served_path forced)
  # The same across nodes and sites (two sites of two nodes of two ranks): TCP between the
  # nodes, shared memory within them, and still nothing allocated or handed off.
  mpi_family_test(mpi-ompi-served-sites-8 mpi 8 served_path forced
                  MULTILANE_PLATFORM=${CMAKE_SOURCE_DIR}/tests/mpi/two-sites-2x2.toml
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2)
  # A decided algorithm whose name is longer than a string's inline room: still no allocation.
  mpi_family_test(mpi-ompi-served-named-4 mpi 4 served_path policy MULTILANE_ALGORITHM_BCAST=auto
                  MULTILANE_ALGORITHM_ALLREDUCE=recursive-doubling MULTILANE_ALGORITHM_BARRIER=auto
                  MULTILANE_ALGORITHM_GATHER=auto)
  mpi_family_test(mpi-ompi-served-retyped-2 mpi 2 served_path policy ARGS retyped)
  mpi_family_test(mpi-ompi-served-passes-3 mpi 3 served_path policy
                  MULTILANE_ALGORITHM_ALLREDUCE=mpi ARGS passes)
  # The measured route: a first run explores and writes the tuning file, a frozen run starts
  # from it and measures nothing.
  set(mpi_tuning ${CMAKE_BINARY_DIR}/tests/mpi/routes-ompi.toml)
  add_test(NAME mpi-ompi-tuning-explore
           COMMAND ${CMAKE_COMMAND} -E rm -f ${mpi_tuning})
  mpi_family_test(mpi-ompi-tuning-measured mpi 3 served_path policy MULTILANE_EXPLAIN=1
                  MULTILANE_TUNING=${mpi_tuning} ARGS routes
                  EXPECT "MPI_Allreduce of 16 B-32 B of float, sum on 3 ranks on 1 node of 1 site: (MPI library|multilane), (measured|pruned): MPI library [0-9.]+ [mun]?s, multilane [0-9.]+ [mun]?s")
  mpi_family_test(mpi-ompi-tuning-frozen mpi 3 served_path policy MULTILANE_EXPLAIN=1
                  MULTILANE_TUNING=${mpi_tuning} MULTILANE_TUNING_MODE=frozen ARGS routes
                  EXPECT "MPI_Allreduce 16 B, 3 ranks on 1 node\\(s\\): [a-zA-Z -]+ \\(MPI_Allreduce of 16 B-32 B of float, sum, (measured|pruned|measured again) \\(tuning file\\): MPI library")
  # A file that gives every class to multilane, without the times (which would put the first
  # re-check later where multilane was the faster): each is measured again at its 64th call,
  # and one the re-check gives to the MPI library is then checked in its steady state (four
  # windows of sixteen calls): 150 rounds.
  add_test(NAME mpi-ompi-tuning-all-multilane
           COMMAND sed -i -e "s/route = \"mpi\"/route = \"multilane\"/" -e "/_us = /d"
                   ${mpi_tuning})
  mpi_family_test(mpi-ompi-tuning-remeasured mpi 3 served_path policy MULTILANE_EXPLAIN=1
                  MULTILANE_TUNING=${mpi_tuning} ARGS routes 150
                  EXPECT "MPI_Allreduce of 16 B-32 B of float, sum on 3 ranks on 1 node of 1 site: (MPI library|multilane), measured again: MPI library [0-9.]+ [mun]?s( \\(mean of [0-9]+ calls\\))?, multilane [0-9.]+ [mun]?s")
  # A long class (1 MiB or more) is rated by its slowest rank, its timed calls started together.
  mpi_family_test(mpi-ompi-tuning-slowest mpi 3 served_path policy MULTILANE_EXPLAIN=1 ARGS long
                  EXPECT "MPI_Gather of 1 MiB-2 MiB on 3 ranks on 1 node of 1 site: (MPI library|multilane), (measured|pruned): MPI library [0-9.]+ [mun]?s, multilane [0-9.]+ [mun]?s \\(slowest rank\\)")
  set_tests_properties(mpi-ompi-tuning-explore PROPERTIES FIXTURES_SETUP mpi_tuning_clean)
  set_tests_properties(mpi-ompi-tuning-measured PROPERTIES FIXTURES_REQUIRED mpi_tuning_clean
                                                           FIXTURES_SETUP mpi_tuning_file)
  set_tests_properties(mpi-ompi-tuning-frozen PROPERTIES FIXTURES_REQUIRED mpi_tuning_file
                                                         FAIL_REGULAR_EXPRESSION "measuring")
  set_tests_properties(mpi-ompi-tuning-all-multilane PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_file DEPENDS mpi-ompi-tuning-frozen
                       FIXTURES_SETUP mpi_tuning_multilane)
  set_tests_properties(mpi-ompi-tuning-remeasured PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_multilane)
  # Every class of the rounds was measured again, kept by multilane or given back: the file
  # says so of each (the one allreduce that checks the run is too rare to finish exploring).
  add_test(NAME mpi-ompi-tuning-remeasured-written
           COMMAND /usr/bin/python3 -c
                   "import sys, tomllib; c = [k for p in tomllib.load(open(sys.argv[1], 'rb'))['placement'] for k in p['class'] if k['source'] != 'unfinished']; print(c); sys.exit(0 if len(c) >= 2 and all(k['source'] == 'measured again' for k in c) else 1)"
                   ${mpi_tuning})
  set_tests_properties(mpi-ompi-tuning-remeasured-written PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_multilane DEPENDS mpi-ompi-tuning-remeasured)
  # The calls made on multilane's routes are counted in the file, for the re-measurement of a
  # later run: every class to multilane again, 30 rounds (short of the 64th call), 30 each.
  add_test(NAME mpi-ompi-tuning-multilane-again
           COMMAND sed -i -e "s/route = \"mpi\"/route = \"multilane\"/" -e "/_us = /d"
                   -e "/calls = /d" ${mpi_tuning})
  mpi_family_test(mpi-ompi-tuning-counted mpi 3 served_path policy MULTILANE_TUNING=${mpi_tuning}
                  ARGS routes 30)
  add_test(NAME mpi-ompi-tuning-calls-written COMMAND grep -c "calls = 30$" ${mpi_tuning})
  set_tests_properties(mpi-ompi-tuning-multilane-again PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_multilane
                       DEPENDS "mpi-ompi-tuning-remeasured;mpi-ompi-tuning-remeasured-written"
                       FIXTURES_SETUP mpi_tuning_counted)
  set_tests_properties(mpi-ompi-tuning-counted PROPERTIES FIXTURES_REQUIRED mpi_tuning_counted)
  set_tests_properties(mpi-ompi-tuning-calls-written PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_counted DEPENDS mpi-ompi-tuning-counted
                       PASS_REGULAR_EXPRESSION "^[1-9][0-9]*")
  # A run too short for any exploration to end (3 rounds): every class it explored is written
  # as the MPI library's, "unfinished", with its calls; the next run starts from that, explores
  # nothing (its classes' 64th call is far) and adds its calls.
  set(mpi_tuning_short ${CMAKE_BINARY_DIR}/tests/mpi/routes-ompi-short.toml)
  add_test(NAME mpi-ompi-tuning-short-clean COMMAND ${CMAKE_COMMAND} -E rm -f ${mpi_tuning_short})
  mpi_family_test(mpi-ompi-tuning-short mpi 3 served_path policy
                  MULTILANE_TUNING=${mpi_tuning_short} ARGS routes 3)
  # Every class unfinished and the MPI library's; the loop's bcast of 1 B and allreduce of 16 B
  # (the same call each round) with the calls given.
  set(unfinished_check
      "import sys, tomllib; c = [k for p in tomllib.load(open(sys.argv[1], 'rb'))['placement'] for k in p['class']]; print(c); n = int(sys.argv[2]); loop = [k.get('calls') for k in c if (k['call'], k['bytes']) in (('MPI_Bcast', 1), ('MPI_Allreduce', 16))]; sys.exit(0 if c and all(k['source'] == 'unfinished' and k['route'] == 'mpi' for k in c) and loop == [n, n] else 1)")
  add_test(NAME mpi-ompi-tuning-unfinished-written
           COMMAND /usr/bin/python3 -c "${unfinished_check}" ${mpi_tuning_short} 3)
  mpi_family_test(mpi-ompi-tuning-unfinished-read mpi 3 served_path policy MULTILANE_EXPLAIN=1
                  MULTILANE_TUNING=${mpi_tuning_short} ARGS routes 3
                  EXPECT "MPI library \\(MPI_Allreduce of 16 B-32 B of float, sum, unfinished \\(tuning file\\)")
  add_test(NAME mpi-ompi-tuning-unfinished-counted
           COMMAND /usr/bin/python3 -c "${unfinished_check}" ${mpi_tuning_short} 6)
  # Without MULTILANE_EXPLAIN the same call again may pass through, and still counts: 9.
  mpi_family_test(mpi-ompi-tuning-unfinished-quiet mpi 3 served_path policy
                  MULTILANE_TUNING=${mpi_tuning_short} ARGS routes 3)
  add_test(NAME mpi-ompi-tuning-unfinished-counted-quietly
           COMMAND /usr/bin/python3 -c "${unfinished_check}" ${mpi_tuning_short} 9)
  set_tests_properties(mpi-ompi-tuning-short-clean PROPERTIES FIXTURES_SETUP mpi_tuning_short)
  # The short run is a fixture of its own, so that a selection without the checks (ctest -L mpi)
  # still runs it before the run that reads its file.
  set_tests_properties(mpi-ompi-tuning-short PROPERTIES FIXTURES_REQUIRED mpi_tuning_short
                       FIXTURES_SETUP mpi_tuning_short_written)
  set_tests_properties(mpi-ompi-tuning-unfinished-written PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_short_written)
  set_tests_properties(mpi-ompi-tuning-unfinished-read PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_short_written
                       DEPENDS mpi-ompi-tuning-unfinished-written FAIL_REGULAR_EXPRESSION "measuring")
  set_tests_properties(mpi-ompi-tuning-unfinished-counted PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_short_written
                       DEPENDS mpi-ompi-tuning-unfinished-read)
  set_tests_properties(mpi-ompi-tuning-unfinished-quiet PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_short_written
                       DEPENDS mpi-ompi-tuning-unfinished-counted)
  set_tests_properties(mpi-ompi-tuning-unfinished-counted-quietly PROPERTIES
                       FIXTURES_REQUIRED mpi_tuning_short_written
                       DEPENDS mpi-ompi-tuning-unfinished-quiet)
  # Two ranks per "node" (tests/mpi/as_nodes.sh): the route policy sends every call with data
  # to multilane, which joins the nodes over TCP and the ranks of a node by shared memory.
  # The v-forms: uneven counts, displacements out of order, datatypes with holes, in place.
  mpi_family_test(mpi-ompi-v-plain-4 mpi 4 coll_v plain)
  mpi_family_test(mpi-ompi-v-forced-1 mpi 1 coll_v forced)
  mpi_family_test(mpi-ompi-v-forced-3 mpi 3 coll_v forced)
  mpi_family_test(mpi-ompi-v-policy-4 mpi 4 coll_v policy)
  mpi_family_test(mpi-ompi-v-nodes-4 mpi 4 coll_v forced
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2)
  # Across two sites the model ranks a scatterv's algorithms for its measurement with the
  # exchange of the root's counts priced into those that read every rank's.
  mpi_family_test(mpi-ompi-v-ranked-sites-4 mpi 4 coll_v policy MULTILANE_EXPLAIN=1
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 1 2
                  EXPECT "MPI_Scatterv: the model ranks multilane's scatterv of [0-9]+ bytes, root 0, 4 ranks: chose linear, modelled [0-9.]+ ms; candidates: linear [0-9.]+ ms, multilane [0-9.]+ ms \\([0-9.]+ ms counts\\)")
  # A nonblocking v-form moves its data while a rank blocks in MPI_Recv
  # (tests/mpi/v_while_blocked.c), on algorithms that read only each rank's own counts and on
  # ones whose counts travel first.
  mpi_family_test(mpi-ompi-v-own-counts-4 mpi 4 v_while_blocked policy ${mpi_own_counts_env}
                  MULTILANE_ALGORITHM_ALLTOALLV=linear MULTILANE_EXPLAIN=1
                  EXPECT "MPI_Ialltoallv, 4 ranks on 1 node\\(s\\): multilane linear")
  mpi_family_test(mpi-ompi-v-all-counts-4 mpi 4 v_while_blocked policy ${mpi_all_counts_env}
                  MULTILANE_EXPLAIN=1
                  EXPECT "MPI_Igatherv root 0, 4 ranks on 1 node\\(s\\): multilane binomial \\(.*its counts travel first")
  # Across sites, on multilane's algorithms for them.
  mpi_family_test(mpi-ompi-v-blocked-sites-6 mpi 6 v_while_blocked policy MULTILANE_EXPLAIN=1
                  MULTILANE_ALGORITHM_GATHERV=multilane MULTILANE_ALGORITHM_SCATTERV=single-lane
                  MULTILANE_ALGORITHM_ALLTOALLV=auto
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 1 3
                  EXPECT "MPI_Ialltoallv \\(2 sites\\), 6 ranks on 6 node\\(s\\): multilane (linear|pairwise) \\(.*its counts travel first")
  mpi_family_test(mpi-ompi-v-own-counts-coll-4 mpi 4 coll_v policy ${mpi_own_counts_env}
                  MULTILANE_ALGORITHM_ALLTOALLV=pairwise)
  mpi_family_test(mpi-ompi-v-explain-3 mpi 3 coll_v forced MULTILANE_EXPLAIN=1
                  EXPECT "multilane-mpi: MPI_Alltoallv, 3 ranks on 1 node\\(s\\): multilane [a-z-]+ \\(MULTILANE_ALGORITHM_ALLTOALLV=auto\\)")
  # MULTILANE_PROFILE: the time in collectives, per kind of call, at MPI_Finalize.
  mpi_family_test(mpi-ompi-profile-3 mpi 3 coll_reduce forced MULTILANE_PROFILE=1
                  EXPECT "multilane-mpi: profile over 3 ranks, per rank: .*MPI_Scan [0-9]+ calls [0-9.e-]+ s; .*collectives [0-9.e-]+ s of [0-9.e-]+ s since MPI_Init \\([0-9.]+%\\)")
  mpi_family_test(mpi-ompi-types-nodes-4 mpi 4 coll_types policy
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2)

  # The library was used: every call of a forced run is explained as multilane's on rank 0.
  mpi_family_test(mpi-ompi-explain mpi 2 fallback forced MULTILANE_EXPLAIN=1 EXPECT
    "multilane-mpi: MPI_Bcast 4000 B root 1, 2 ranks on 1 node\\(s\\): multilane [a-z-]+ \\(MULTILANE_ALGORITHM_BCAST=auto\\)")
  # MPI_THREAD_MULTIPLE: four threads, each on its own communicator, at once (thread_multiple.c);
  # forced, multilane serves them, all four in MPI_COMM_WORLD's job (three duplicates and a split
  # whose ranks are in another order); with MULTILANE_MAX_JOBS=0 no communicator has a job, and
  # each stays with the MPI library and says why (the program's output comes first).
  mpi_family_test(mpi-ompi-threads-plain-3 mpi 3 thread_multiple plain)
  mpi_family_test(mpi-ompi-threads-forced-3 mpi 3 thread_multiple forced
                  EXPECT "served by multilane: [1-9][0-9]* blocking, [1-9][0-9]* nonblocking; jobs: 1 made, 4 shared")
  mpi_family_test(mpi-ompi-threads-policy-4 mpi 4 thread_multiple policy)
  mpi_family_test(mpi-ompi-threads-capped-3 mpi 3 thread_multiple forced MULTILANE_MAX_JOBS=0
                  MULTILANE_EXPLAIN=1
                  EXPECT "jobs: 0 made, 0 shared.*MPI library \\(every multilane job a rank may make is taken \\(MULTILANE_MAX_JOBS=0\\), and this communicator shares none of them\\)")
  set_tests_properties(mpi-ompi-threads-plain-3 mpi-ompi-threads-forced-3 mpi-ompi-threads-policy-4
                       mpi-ompi-threads-capped-3 PROPERTIES LABELS "mpi;threads")
  # ... an intercommunicator's calls are explained as the MPI library's ...
  mpi_family_test(mpi-ompi-explain-inter mpi 2 fallback forced MULTILANE_EXPLAIN=1 EXPECT
    "multilane-mpi: MPI_Allgather: MPI library \\(intercommunicator\\)")
  # ... and MULTILANE_MPI=off turns it off: nothing is explained.
  mpi_family_test(mpi-ompi-off mpi 2 fallback forced MULTILANE_EXPLAIN=1 MULTILANE_MPI=off)
  set_tests_properties(mpi-ompi-off PROPERTIES FAIL_REGULAR_EXPRESSION "multilane-mpi:")

  # MULTILANE_PLATFORM: ranks run as nodes node0..node3 and are placed on the file's two sites
  # by name; a rank on a node the file lacks, and a file that cannot be read, stop the job with
  # the reason.
  set(mpi_platform ${CMAKE_SOURCE_DIR}/tests/mpi/two-sites-2x2.toml)
  mpi_family_test(mpi-ompi-platform mpi 5 coll_comms policy MULTILANE_EXPLAIN=1
                  MULTILANE_PLATFORM=${mpi_platform}
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2
                  EXPECT "MPI_Bcast 1048579 B root [0-9] \\(2 sites\\), 5 ranks on 3 node\\(s\\): multilane ")
  foreach(case IN ITEMS "unknown-host:${mpi_platform}:rank [0-9] runs on .node4., which is not a node of the file"
                        "bad-file:${CMAKE_BINARY_DIR}/nonexistent.toml:nonexistent.toml: cannot open")
    string(REPLACE ":" ";" parts "${case}")
    list(GET parts 0 what)
    list(GET parts 1 file)
    list(GET parts 2 message)
    add_test(NAME mpi-ompi-platform-${what}
             COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero "-DEXPECT_OUTPUT=multilane: .*${message}"
                     -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                     --oversubscribe -n 5 -x LD_PRELOAD=$<TARGET_FILE:multilane_mpi>
                     -x MULTILANE_PLATFORM=${file} ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 1
                     $<TARGET_FILE:mpi_test_coll_comms_ompi>)
    set_tests_properties(mpi-ompi-platform-${what} PROPERTIES TIMEOUT 120 LABELS mpi)
  endforeach()

  # Discovery on the emulated two-site grid (root only: skipped otherwise): without a platform
  # file the library finds 8 nodes of 2 lanes in 2 sites, and the WAN's 10 ms one way within
  # 10%, and the bcast that crosses it arrives intact (bench/mpi_peer, built with the same Open
  # MPI, exits non-zero when a rank's data is wrong).
  add_test(NAME mpi-ompi-discovers-the-grid
           COMMAND ${CMAKE_COMMAND}
                   "-DEXPECT_OUTPUT=8 node\\(s\\) of 2 lane\\(s\\), 2 site\\(s\\) \\(site0: 4 node\\(s\\).*site0-site1: (9\\.[0-9]+|10|10\\.[0-9]+|11\\.0[0-9]*) ms one way"
                   -P ${MULTILANE_EXPECT} -- ${CMAKE_SOURCE_DIR}/tests/mpi/on_grid.sh
                   ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/examples/platforms/two-sites-4x2.toml 8
                   $<TARGET_FILE:mpi_peer> --collective bcast --sizes 1MiB --repetitions 1
                   --iterations 1 --check)
  set_tests_properties(mpi-ompi-discovers-the-grid PROPERTIES TIMEOUT 180 LABELS mpi
                       RUN_SERIAL TRUE SKIP_REGULAR_EXPRESSION "skipped: emulated grids need root")
  # Given the grid's own platform file, the ranks are placed by lane address (every emulated node
  # has the host's name) and the model prices with the shaped rates: `multilane sim`'s 157 ms
  # for this gather, where discovery reads the veths' nominal 10 Gbit/s.
  add_test(NAME mpi-ompi-reads-the-grids-platform-file
           COMMAND ${CMAKE_COMMAND}
                   "-DEXPECT_OUTPUT=platform: /run/multilane/mlgrid[0-9]+/platform.toml.*gather of 1048576 bytes, root 0, 8 ranks: chose linear, modelled 156.82 ms"
                   -P ${MULTILANE_EXPECT} -- ${CMAKE_SOURCE_DIR}/tests/mpi/on_grid.sh
                   --grid-platform ${CMAKE_BINARY_DIR}
                   ${CMAKE_SOURCE_DIR}/examples/platforms/two-sites-4x2.toml 8
                   $<TARGET_FILE:mpi_peer> --collective gather --sizes 1MiB --repetitions 1
                   --iterations 1 --check)
  set_tests_properties(mpi-ompi-reads-the-grids-platform-file PROPERTIES TIMEOUT 180 LABELS mpi
                       RUN_SERIAL TRUE SKIP_REGULAR_EXPRESSION "skipped: emulated grids need root")
  # A rank that cannot set up its multilane job (here a transport setting only it has wrong)
  # tells the others through the address exchange: every rank stops with its reason.
  add_test(NAME mpi-ompi-one-rank-cannot-set-up
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                   "-DEXPECT_OUTPUT=multilane: rank [02] .*rank 1 could not set up: MULTILANE_STREAMS_LAN=0 is out of range: must be 1..256"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 3 -x LD_PRELOAD=$<TARGET_FILE:multilane_mpi>
                   -x MULTILANE_ALGORITHM_BCAST=auto sh -c
                   "if [ $OMPI_COMM_WORLD_RANK = 1 ]\; then export MULTILANE_STREAMS_LAN=0\; fi\; exec $<TARGET_FILE:mpi_test_coll_comms_ompi>")
  set_tests_properties(mpi-ompi-one-rank-cannot-set-up PROPERTIES TIMEOUT 120 LABELS mpi)
  # `multilane platform probe` under mpirun: ranks run as two nodes of one host measure
  # between them and write a platform of 2 nodes with their lanes.
  add_test(NAME mpi-ompi-platform-probe
           COMMAND ${CMAKE_COMMAND} "-DEXPECT_OUTPUT=lanes of site0: 1 stream\\(s\\): .*\\[\\[site.node\\]\\].*\\[\\[site.node\\]\\]"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 4 ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2
                   $<TARGET_FILE:multilane> platform probe --seconds 0.2)
  set_tests_properties(mpi-ompi-platform-probe PROPERTIES TIMEOUT 120 LABELS mpi)
  # A MULTILANE_LANES entry that matches no interface stops every rank with the reason.
  add_test(NAME mpi-ompi-bad-lanes
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                   "-DEXPECT_OUTPUT=multilane: .*rank [0-9]: MULTILANE_LANES=.nosuch0.: .nosuch0. matches no interface that is up with an IPv4 address"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 3 -x LD_PRELOAD=$<TARGET_FILE:multilane_mpi>
                   -x MULTILANE_LANES=nosuch0 -x MULTILANE_ALGORITHM_BCAST=auto
                   $<TARGET_FILE:mpi_test_coll_comms_ompi>)
  set_tests_properties(mpi-ompi-bad-lanes PROPERTIES TIMEOUT 120 LABELS mpi)

  # Failures follow the error handler: MPI_ERRORS_RETURN gives a code and MPI_Error_string the
  # message; MPI_ERRORS_ARE_FATAL aborts with the message naming the rank, call and cause (found
  # by the shared-memory group on one node, by the TCP frames' signatures across nodes).
  mpi_family_test(mpi-ompi-errors-return mpi 3 errors plain LD_PRELOAD=$<TARGET_FILE:multilane_mpi>
                  MULTILANE_ALGORITHM_BCAST=auto MULTILANE_TIMEOUT=10)
  add_test(NAME mpi-ompi-errors-fatal
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                   "-DEXPECT_OUTPUT=multilane: rank [12] \\(world rank [12]\\) in MPI_Bcast on a communicator of 3 ranks: .*(rank 0 runs a different call|local rank 0 is in call 1 \\(bcast of 1 KB)"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 3 -x LD_PRELOAD=$<TARGET_FILE:multilane_mpi>
                   -x MULTILANE_ALGORITHM_BCAST=auto -x MULTILANE_TIMEOUT=10
                   $<TARGET_FILE:mpi_test_errors_ompi> fatal)
  set_tests_properties(mpi-ompi-errors-fatal PROPERTIES TIMEOUT 120 LABELS mpi)
  # A rank killed while the others are in a wrapped bcast: they abort within the timeout (3 s)
  # naming it and the kind. (Open MPI would end the job itself at once without the MCA setting.)
  # Serial, and segments of ranks the launcher killed are removed (remove_dead_segments.sh says
  # why). With MPI_ERRORS_RETURN, the code's class is multilane's class for a dead peer.
  # On MPI_COMM_WORLD's ranks in reverse order (`split`), sharing its job, four ranks as four
  # nodes: the TCP transport names the dead rank 1 by its MPI_COMM_WORLD rank (rank 2 there), and
  # the message says so.
  foreach(mode "" "return" "split")
    set(name mpi-ompi-rank-killed)
    set(wrap "")
    set(expected "multilane: rank [023] \\(world rank [023]\\) in MPI_Bcast on a communicator of 4 ranks: peer gone: .*ranks? 1[^0-9]")
    if(mode STREQUAL "return")
      set(name mpi-ompi-rank-killed-${mode})
      set(expected "error class: multilane: peer gone")
    elseif(mode STREQUAL "split")
      set(name mpi-ompi-rank-killed-${mode})
      set(wrap ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 1)
      set(expected "multilane: rank [013] \\(world rank [023]\\) in MPI_Bcast on a communicator of 4 ranks: peer gone: [^\n]*(to rank 1 failed|rank 1 closed its connections)[^\n]* \\(the ranks it names, local ranks aside, are MPI_COMM_WORLD's: this communicator shares their multilane job\\)")
    endif()
    add_test(NAME ${name}
             COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero "-DEXPECT_OUTPUT=${expected}"
                     -P ${MULTILANE_EXPECT} -- ${CMAKE_SOURCE_DIR}/tests/mpi/remove_dead_segments.sh
                     ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                     --oversubscribe -n 4 --mca orte_abort_on_non_zero_status 0
                     -x LD_PRELOAD=$<TARGET_FILE:multilane_mpi> -x MULTILANE_ALGORITHM_BCAST=auto
                     -x MULTILANE_TIMEOUT=3 ${wrap} $<TARGET_FILE:mpi_test_errors_ompi> kill ${mode})
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 LABELS mpi RUN_SERIAL TRUE)
  endforeach()

  # Linked, not preloaded: -lmultilane_mpi before the MPI library.
  add_executable(mpi_test_linked_ompi tests/mpi/coll_nonblocking.c)
  target_link_libraries(mpi_test_linked_ompi PRIVATE multilane_mpi PkgConfig::MULTILANE_OMPI)
  add_test(NAME mpi-ompi-linked
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0
                   "-DEXPECT_OUTPUT=MPI_Ibcast 4 B root 0, 3 ranks on 1 node\\(s\\): multilane"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 3 -x MULTILANE_EXPLAIN=1 -x MULTILANE_ALGORITHM_BCAST=auto
                   $<TARGET_FILE:mpi_test_linked_ompi>)
  set_tests_properties(mpi-ompi-linked PROPERTIES TIMEOUT 120 LABELS mpi)
  # ... and the static variant, linked the same way.
  add_executable(mpi_test_static_ompi tests/mpi/coll_nonblocking.c)
  target_link_libraries(mpi_test_static_ompi PRIVATE multilane_mpi_static PkgConfig::MULTILANE_OMPI)
  add_test(NAME mpi-ompi-static
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0
                   "-DEXPECT_OUTPUT=MPI_Ialltoall 4000 B, 2 ranks on 1 node\\(s\\): multilane"
                   -P ${MULTILANE_EXPECT} -- ${MULTILANE_MPIRUN_OPENMPI} --allow-run-as-root
                   --oversubscribe -n 2 -x MULTILANE_EXPLAIN=1 -x MULTILANE_ALGORITHM_ALLTOALL=auto
                   $<TARGET_FILE:mpi_test_static_ompi>)
  set_tests_properties(mpi-ompi-static PROPERTIES TIMEOUT 120 LABELS mpi)
else()
  message(STATUS "Open MPI or mpirun.openmpi missing: the Open MPI tests of the MPI library are skipped")
endif()

# MPICH's own collective tests (tests/mpi/conformance.sh), the bounded subset: the nonblocking and
# datatype programs, natively and with every call forced to multilane, under both families. Their
# sources are MPICH's (tag v4.3.2, not part of this project and not downloaded by the build):
# configure with -DMULTILANE_MPICH_TESTS=DIR (an MPICH tree or its test/mpi folder), or set
# MPICH_SRC. Without them the test reports itself skipped.
set(MULTILANE_MPICH_TESTS "$ENV{MPICH_SRC}" CACHE PATH
    "MPICH source tree whose test/mpi/coll programs tests/mpi/conformance.sh runs")
if(MULTILANE_MPICH_TESTS)
  add_test(NAME mpi-mpich-coll-conformance
           COMMAND ${CMAKE_SOURCE_DIR}/tests/mpi/conformance.sh --mpich-src ${MULTILANE_MPICH_TESTS}
                   --build ${CMAKE_BINARY_DIR} --work ${CMAKE_BINARY_DIR}/tests/mpi/conformance
                   --subset nonblocking,datatype --timeout 240)
else()
  add_test(NAME mpi-mpich-coll-conformance
           COMMAND ${CMAKE_COMMAND} -E echo
                   "skipped: MPICH's test sources not given (cmake -DMULTILANE_MPICH_TESTS=DIR)")
endif()
set_tests_properties(mpi-mpich-coll-conformance PROPERTIES TIMEOUT 900 LABELS mpi RUN_SERIAL TRUE
                     SKIP_REGULAR_EXPRESSION "skipped: MPICH's test sources not given")

# ---- MPICH ----
if(TARGET multilane_mpich AND MULTILANE_MPIEXEC_MPICH)
  foreach(program IN LISTS mpi_test_programs)
    add_executable(mpi_test_${program}_mpich tests/mpi/${program}.c)
    target_link_libraries(mpi_test_${program}_mpich PRIVATE PkgConfig::MULTILANE_MPICH)
    set_target_properties(mpi_test_${program}_mpich PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                                               ${CMAKE_BINARY_DIR}/tests/mpi)
  endforeach()
  # MPICH's ranks poll while they wait: plain runs on 2 cores are slow, so fewer of them.
  mpi_family_test(mpi-mpich-types-plain-2 mpich 2 coll_types plain)
  mpi_family_test(mpi-mpich-types-forced-4 mpich 4 coll_types forced)
  mpi_family_test(mpi-mpich-reduce-forced-4 mpich 4 coll_reduce forced)
  mpi_family_test(mpi-mpich-types-policy-2 mpich 2 coll_types policy)
  mpi_family_test(mpi-mpich-v-plain-3 mpich 3 coll_v plain)
  mpi_family_test(mpi-mpich-v-forced-4 mpich 4 coll_v forced)
  mpi_family_test(mpi-mpich-v-policy-3 mpich 3 coll_v policy)
  mpi_family_test(mpi-mpich-v-own-counts-3 mpich 3 v_while_blocked policy ${mpi_own_counts_env}
                  MULTILANE_ALGORITHM_ALLTOALLV=pairwise)
  mpi_family_test(mpi-mpich-v-all-counts-4 mpich 4 v_while_blocked policy ${mpi_all_counts_env})
  mpi_family_test(mpi-mpich-v-own-counts-coll-3 mpich 3 coll_v policy ${mpi_own_counts_env}
                  MULTILANE_ALGORITHM_ALLTOALLV=linear)
  mpi_family_test(mpi-mpich-comms-forced-5 mpich 5 coll_comms forced)
  # The split with reversed keys makes the job (the first of 5 ranks on multilane's route); the
  # duplicate and the first half share it.
  mpi_family_test(mpi-mpich-comms-shared-5 mpich 5 coll_comms forced MULTILANE_EXPLAIN=1
                  EXPECT "communicator of 3 ranks, .*; shares the multilane job of 5 ranks, these among them \\(call space [0-9]+\\).*communicator of 5 ranks, .*; shares the multilane job of the same ranks in another order")
  # Two ranks per node and two nodes per site (MULTILANE_SITE): the library's platform has two
  # sites, and multilane's cross-site algorithms run.
  mpi_family_test(mpi-mpich-comms-sites-5 mpich 5 coll_comms policy MULTILANE_EXPLAIN=1
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 2 2
                  EXPECT "MPI_Bcast 1048579 B root [0-9] \\(2 sites\\), 5 ranks on 3 node\\(s\\): multilane ")
  mpi_family_test(mpi-mpich-nonblocking-forced-3 mpich 3 coll_nonblocking forced
                  ARGS free-before-wait)
  mpi_family_test(mpi-mpich-fallback-forced-4 mpich 4 fallback forced)
  mpi_family_test(mpi-mpich-served-forced-3 mpich 3 served_path forced)
  mpi_family_test(mpi-mpich-threads-forced-3 mpich 3 thread_multiple forced
                  EXPECT "served by multilane: [1-9][0-9]* blocking, [1-9][0-9]* nonblocking; jobs: 1 made, 4 shared")
  set_tests_properties(mpi-mpich-threads-forced-3 PROPERTIES LABELS "mpi;threads")
  mpi_family_test(mpi-mpich-served-nodes-6 mpich 6 served_path forced
                  WRAP ${CMAKE_SOURCE_DIR}/tests/mpi/as_nodes.sh 3)
  mpi_family_test(mpi-mpich-served-retyped-2 mpich 2 served_path policy ARGS retyped)
  mpi_family_test(mpi-mpich-served-passes-3 mpich 3 served_path policy
                  MULTILANE_ALGORITHM_ALLREDUCE=mpi ARGS passes)
  mpi_family_test(mpi-mpich-errors-return mpich 3 errors plain
                  LD_PRELOAD=$<TARGET_FILE:multilane_mpich> MULTILANE_ALGORITHM_BCAST=auto
                  MULTILANE_TIMEOUT=10)
  # (No rank-killed test under hydra: even with -disable-auto-cleanup it sometimes kills every
  # rank at once when one dies by a signal, before the others can notice.)
  mpi_family_test(mpi-mpich-explain mpich 2 fallback forced MULTILANE_EXPLAIN=1 EXPECT
    "multilane-mpi: MPI_Gather 4000 B root 0, 2 ranks on 1 node\\(s\\): multilane ")
else()
  message(STATUS "MPICH or mpiexec.mpich missing: the MPICH tests of the MPI library are skipped")
endif()
