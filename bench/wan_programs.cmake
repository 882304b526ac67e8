# bench/wan_programs.cmake — WAN layer benchmarks (see docs/wan.md for the commands and results).
if(TARGET multilane::wan)
  add_executable(wan_throughput ${CMAKE_CURRENT_SOURCE_DIR}/wan_throughput.cpp)
  target_link_libraries(wan_throughput PRIVATE multilane::wan)
  add_executable(wan_routers ${CMAKE_CURRENT_SOURCE_DIR}/wan_routers.cpp)
  target_link_libraries(wan_routers PRIVATE multilane::wan)
endif()
