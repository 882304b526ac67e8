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

add_executable(shm_bench shm_bench.cpp)
target_link_libraries(shm_bench PRIVATE multilane::runtime MPI::MPI_CXX CLI11::CLI11)
