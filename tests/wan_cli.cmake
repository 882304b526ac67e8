# tests/wan_cli.cmake — a program written against the WAN layer's public C header, built and
# run here, plus the command-line tests of relay, router, serve and cp.
if(NOT TARGET multilane::wan)
  return()
endif()

# The channels API from C: compiled as C to prove the header is C.
enable_language(C)
add_executable(channels_c_example ${CMAKE_SOURCE_DIR}/tests/wan/programs/channels_c_example.c)
target_link_libraries(channels_c_example PRIVATE multilane::wan)
set_target_properties(channels_c_example PROPERTIES LINKER_LANGUAGE CXX)
add_test(NAME wan-channels-c-example
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=^channels_c_example: ok"
                 -P ${MULTILANE_EXPECT} -- $<TARGET_FILE:channels_c_example>)
set_tests_properties(wan-channels-c-example PROPERTIES TIMEOUT 60)

# ---- relay, router, serve and cp: bad arguments and an unreachable peer, each named ----
set(wan_cli_secret ${CMAKE_BINARY_DIR}/wan-cli-secret.txt)
file(WRITE ${wan_cli_secret} "the wan command-line tests' secret\n")
set(wan_cli_short_secret ${CMAKE_BINARY_DIR}/wan-cli-short-secret.txt)
file(WRITE ${wan_cli_short_secret} "short\n")
multilane_cli_test(wan-cli-router-needs-site 2 "--site is required" router --rank 0)
multilane_cli_test(wan-cli-router-bad-peer 2 "--peer: \"nonsense\" is not SITE=HOST:PORT" router
                   --site 0 --index 0 --listen 127.0.0.1:0 --peer nonsense
                   --secret-file ${wan_cli_secret})
multilane_cli_test(wan-cli-router-rank-needs-one-direction 2
                   "a rank needs one of --send-to and --receive-from" router --site 0 --rank 0
                   --routers 127.0.0.1:1 --secret-file ${wan_cli_secret})
multilane_cli_test(wan-cli-router-short-secret 2
                   "--secret-file: the secret in .*short-secret\\.txt has 5 characters, at least 16"
                   router --site 0 --index 0 --listen 127.0.0.1:0
                   --secret-file ${wan_cli_short_secret})
multilane_cli_test(wan-cli-serve-missing-directory 2 "nonexistent-served-dir is not a directory"
                   serve ${CMAKE_BINARY_DIR}/nonexistent-served-dir --listen 127.0.0.1:0
                   --secret-file ${wan_cli_secret})
multilane_cli_test(wan-cli-cp-missing-secret-file 2
                   "--secret-file: cannot open .*nonexistent-secret" cp ${wan_cli_secret}
                   127.0.0.1: --secret-file ${CMAKE_BINARY_DIR}/nonexistent-secret)
multilane_cli_test(wan-cli-cp-bad-target 2 "\"no-colon-here\" names no host \\(write host:path\\)"
                   cp ${wan_cli_secret} no-colon-here --secret-file ${wan_cli_secret})
# Nobody listens on port 1 of 127.0.0.1: the copy fails after the timeout (status 3, a timeout)
# naming the server.
multilane_cli_test(wan-cli-cp-unreachable-server 3
                   "multilane cp: error \\(timeout\\): path 0 \\(to 127\\.0\\.0\\.1:1\\): connecting .*; nothing was copied"
                   cp ${wan_cli_secret} 127.0.0.1: --port 1 --timeout 1
                   --secret-file ${wan_cli_secret})
multilane_cli_test(wan-cli-relay-bad-allow 2 "--allow: \"not-a-network\" is not a network" relay
                   --listen 127.0.0.1:0 --allow not-a-network --secret-file ${wan_cli_secret})
