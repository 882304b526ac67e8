# bench/tcp_floor.cmake — tcp_floor: the time of a frame over loopback TCP in the simplest
# programs, round trip or one way, by way of waiting (raw polling, raw sleeping, asio over one
# connection, asio over one connection per direction): the floors under the engine's loopback
# figures (docs/performance.md).
add_executable(tcp_floor tcp_floor.cpp)
target_link_libraries(tcp_floor PRIVATE CLI11::CLI11 Threads::Threads)

# Smoke tests: a few frames; they check that each way completes and prints its line, not timing.
add_test(NAME tcp-floor-prints-each-way
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\\| asio-one-way \\| [0-9.]+ us"
                 -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                 $<TARGET_FILE:tcp_floor> --round-trips 200 --runs 1)
set_tests_properties(tcp-floor-prints-each-way PROPERTIES TIMEOUT 60)
add_test(NAME tcp-floor-moves-large-frames-one-way
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\\| raw-block \\| [0-9.]+ us"
                 -P ${CMAKE_SOURCE_DIR}/tests/expect.cmake --
                 $<TARGET_FILE:tcp_floor> --size 1MiB --pattern one-way --messages 20 --runs 1)
set_tests_properties(tcp-floor-moves-large-frames-one-way PROPERTIES TIMEOUT 60)
