# bench/copy_costs.cmake — copy_costs: the raw moves of the shared-memory layer on this machine
# (core-to-core round trip, copy_bytes, process_vm_readv); bench/compare-shm.sh runs it before
# every run to record the round trip (docs/performance.md).
if(NOT TARGET multilane::runtime)
  return()
endif()
add_executable(copy_costs copy_costs.cpp)
target_link_libraries(copy_costs PRIVATE multilane::runtime CLI11::CLI11)

# Smoke test: one small size, a few repetitions; checks that the kernel copy is allowed and the
# table is printed, not any timing.
add_test(NAME copy-costs-prints-its-table
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\\| 4 KiB \\| [0-9.]+ \\| [0-9.]+ \\|"
                 -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                 $<TARGET_FILE:copy_costs> --sizes 4KiB --repetitions 20)
set_tests_properties(copy-costs-prints-its-table PROPERTIES TIMEOUT 60)
