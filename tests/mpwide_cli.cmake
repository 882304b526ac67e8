# tests/mpwide_cli.cmake — MPWide's own programs, unchanged, on multilane's MPWide.h
# (bench/mpwide-programs.sh), when the environment names a checkout of djgroen/MPWide in
# MPWIDE_SRC at test time; skipped, saying so, otherwise. Serial: the programs use a fixed port.
if(NOT TARGET multilane::wan)
  return()
endif()
add_test(NAME mpwide-programs COMMAND sh ${CMAKE_SOURCE_DIR}/bench/mpwide-programs.sh)
set_tests_properties(mpwide-programs PROPERTIES
  ENVIRONMENT "BUILD=${CMAKE_BINARY_DIR};MPWIDE_SKIP_STATUS=77" SKIP_RETURN_CODE 77
  RUN_SERIAL TRUE TIMEOUT 900)
