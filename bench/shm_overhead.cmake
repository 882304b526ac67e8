# bench/shm_overhead.cmake — shm_overhead: our own software cost per small shared-memory call,
# both ranks of a group run by one thread so that no cache line moves between cores
# (docs/performance.md). Google Benchmark (libbenchmark-dev, scripts/install-deps.sh).
find_package(benchmark QUIET)
if(NOT benchmark_FOUND OR NOT TARGET multilane::runtime)
  message(STATUS "Google Benchmark (libbenchmark-dev) or the runtime library missing: "
                 "shm_overhead is not built")
  return()
endif()
add_executable(shm_overhead shm_overhead.cpp)
target_link_libraries(shm_overhead PRIVATE multilane::runtime benchmark::benchmark)

# Smoke test: every collective's calls finish in one thread (the benchmark skips with an error
# otherwise) and are reported, warm and cold; checks no timing.
add_test(NAME shm-overhead-runs-every-collective
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0
                 "-DEXPECT_OUTPUT=bcast/two_ranks_one_thread/8 .*alltoall/two_ranks_one_thread/512 +[0-9.]+ ns.*alltoall/two_ranks_one_thread_cold/512/iterations:3000/manual_time +[0-9.]+ ns"
                 -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                 $<TARGET_FILE:shm_overhead> --benchmark_min_time=0.001)
set_tests_properties(shm-overhead-runs-every-collective PROPERTIES TIMEOUT 60)
