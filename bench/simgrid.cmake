# bench/simgrid.cmake — the SimGrid peer (issue 3): multilane's schedules replayed in SimGrid,
# simulated and wall-clock times side by side with multilane's simulator (docs/performance.md).
# Built only when Debian's libsimgrid-dev is installed (scripts/install-deps.sh installs it).
pkg_check_modules(SIMGRID IMPORTED_TARGET simgrid)
if(NOT SIMGRID_FOUND)
  message(STATUS "SimGrid not found (Debian package libsimgrid-dev): simgrid_peer is not built")
  return()
endif()

add_executable(simgrid_peer simgrid_peer.cpp simgrid_child.cpp simgrid_platform.cpp
                            simgrid_replay.cpp simgrid_transfers.cpp)
target_include_directories(simgrid_peer PRIVATE ${CMAKE_SOURCE_DIR}/tools)  # cli_options.hpp
target_link_libraries(simgrid_peer PRIVATE multilane::core PkgConfig::SIMGRID CLI11::CLI11)

# Simulated times are deterministic: SimGrid, replaying the same schedules with multilane's
# channel semantics (overlapped latency), must agree with multilane's simulator — on the paper's
# two-site platform as it is and with a TCP window that caps each WAN connection (TCP-gamma).
set(simgrid_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)
add_test(NAME simgrid-peer-agrees
         COMMAND simgrid_peer --platform ${simgrid_platforms}/two-sites-4x2.toml --sizes 1MiB
                 --runs 1 --latency overlapped --check 0.02)
add_test(NAME simgrid-peer-agrees-tcp-window
         COMMAND simgrid_peer --platform ${simgrid_platforms}/two-sites-4x2.toml --sizes 1MiB
                 --runs 1 --latency overlapped --tcp-window 256KiB --check 0.02)
add_test(NAME simgrid-peer-bad-algorithm
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=2 "-DEXPECT_OUTPUT=unknown.*binomial"
                 -P ${MULTILANE_EXPECT} -- $<TARGET_FILE:simgrid_peer> --platform
                 ${simgrid_platforms}/two-sites-4x2.toml --algorithms nosuch --runs 1)
set_tests_properties(simgrid-peer-agrees simgrid-peer-agrees-tcp-window simgrid-peer-bad-algorithm
                     PROPERTIES TIMEOUT 60)
