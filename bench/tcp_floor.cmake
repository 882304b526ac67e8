# bench/tcp_floor.cmake — tcp_floor: the round trip of a small frame over loopback TCP by way of
# waiting (raw polling, asio over one connection, asio over one connection per direction), the
# floors under the engine's small-message figures (docs/performance.md).
add_executable(tcp_floor tcp_floor.cpp)
target_link_libraries(tcp_floor PRIVATE CLI11::CLI11 Threads::Threads)

# Smoke test: a few round trips; checks that each way completes and prints its line, not timing.
add_test(NAME tcp-floor-prints-each-way
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\\| asio-one-way \\| [0-9.]+ us"
                 -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                 $<TARGET_FILE:tcp_floor> --round-trips 200 --runs 1)
set_tests_properties(tcp-floor-prints-each-way PROPERTIES TIMEOUT 60)
