# bench/shm.cmake — shm_bench: the shared-memory layer's collectives (src/runtime/shm) side by
# side with Open MPI's MPI_Bcast / MPI_Scatter / MPI_Gather / MPI_Alltoall in one MPI run
# (docs/performance.md, "Shared memory (SMP)"). Needs Debian's Open MPI (libopenmpi-dev).
# The project enables C++ only: MPI's C API through the CXX component, without the deprecated
# MPI C++ bindings.
set(MPI_CXX_SKIP_MPICXX ON)
find_package(MPI COMPONENTS CXX)
if(NOT MPI_CXX_FOUND OR NOT TARGET multilane::runtime)
  message(STATUS "MPI (libopenmpi-dev) or the runtime library missing: shm_bench is not built")
  return()
endif()

add_executable(shm_bench shm_bench.cpp shm_floors.cpp)
target_link_libraries(shm_bench PRIVATE multilane::runtime MPI::MPI_CXX CLI11::CLI11)

# Smoke test: both implementations on two ranks, results compared byte for byte (shm_bench
# aborts on a difference, and so do the floors), a few sizes on both sides of the switch points,
# the root's share of a single-copy scatter and the floors' columns; seconds, not minutes.
if(MPIEXEC_EXECUTABLE)
  add_test(NAME shm-bench-agrees-with-mpi
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\\| scatter \\| 100003 B \\|[^|]*\\|[^|]*\\|[^|]*\\|[^|]*\\| [0-9]+% \\| [0-9.]+% \\|.*\\| alltoall \\| 8 B \\|[^|]*\\|[^|]*\\|[^|]*\\|[^|]*\\|[^|]*\\| - \\|[^|]*\\| cache line \\|.*\\| alltoall \\| 100003 B \\|[^|]*\\|[^|]*\\|[^|]*\\|[^|]*\\|[^|]*\\| - \\|[^|]*\\| kernel copy \\|"
                   -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                   ${MPIEXEC_EXECUTABLE} -n 2 --oversubscribe --mca btl vader,self
                   $<TARGET_FILE:shm_bench> --sizes 0,8,5000,100003 --budget 0.01
                   --min-repetitions 3 --max-repetitions 21 --buffer-size 4KiB --kernel-copy-floor
                   --cache-line-floor
                   --pipeline-buffers 3)
  # LeakSanitizer off: Open MPI's MPI_Init leaks by design (as in bench/mpi.cmake).
  set_tests_properties(shm-bench-agrees-with-mpi PROPERTIES TIMEOUT 60
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0")
endif()
