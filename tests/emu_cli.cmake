# tests/emu_cli.cmake — command-line tests of `multilane emu` that need no root: argument
# errors (exit status 2) and the refusal to run without root (exit status 8), checked by
# running the command as user nobody when the tests run as root. Included by the top
# CMakeLists.txt after tests/cli.cmake. The tests that build grids are in tests/emu/.
set(emu_platform ${CMAKE_SOURCE_DIR}/examples/platforms/two-sites-4x2.toml)

multilane_cli_test(cli-emu-up-bad-name 2
                   "emulation name \"a-b\" is not allowed: use 1 to 24 characters of A-Z a-z 0-9 _"
                   emu up ${emu_platform} --name a-b)
multilane_cli_test(cli-emu-up-missing-platform 2 "nonexistent\\.toml: cannot open: " emu up
                   ${CMAKE_BINARY_DIR}/nonexistent.toml --name cli)
multilane_cli_test(cli-emu-up-bad-platform 2 "syntax-error\\.toml:[0-9]+: syntax: " emu up
                   ${CMAKE_SOURCE_DIR}/examples/platforms/bad/syntax-error.toml --name cli)
multilane_cli_test(cli-emu-up-bad-mtu 2 "--mtu: Value 100 not in range 576 to 65000" emu up
                   ${emu_platform} --mtu 100)
multilane_cli_test(cli-emu-up-bad-loss 2 "--loss: Value 1 not in range" emu up ${emu_platform}
                   --loss 1)
multilane_cli_test(cli-emu-up-bad-queue 2 "--queue: size \"1XB\" does not parse" emu up
                   ${emu_platform} --queue 1XB)
multilane_cli_test(cli-emu-exec-without-command 2 "COMMAND is required" emu exec 0)
multilane_cli_test(cli-emu-no-subcommand 2 "A subcommand is required" emu)

# Without root: a clear error, exit status 8 (the system refused: multilane/errors.hpp),
# nothing created.
find_program(MULTILANE_SETPRIV setpriv)
if(MULTILANE_SETPRIV)
  foreach(subcommand "up;${emu_platform};--name;cli_nobody" "status" "down;--name;cli_nobody"
                     "exec;--name;cli_nobody;0;--;true")
    list(GET subcommand 0 first)
    add_test(NAME cli-emu-${first}-needs-root
             COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=8
                     "-DEXPECT_OUTPUT=multilane: error \\(resource\\): multilane emu needs root \\(CAP_NET_ADMIN and CAP_SYS_ADMIN\\)"
                     -P ${MULTILANE_EXPECT} -- sh -c
                     "if [ \"$(id -u)\" = 0 ]\; then exec ${MULTILANE_SETPRIV} --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \"$@\"\; else exec \"$@\"\; fi"
                     sh $<TARGET_FILE:multilane> emu ${subcommand})
  endforeach()
endif()

# `launch --emu` and `bench --emu` without root: the same clear error, before anything starts.
if(MULTILANE_SETPRIV)
  foreach(command "launch;--emu;cli_nobody;-n;2;--;true" "bench;--emu;cli_nobody;-n;2")
    list(GET command 0 first)
    add_test(NAME cli-${first}-emu-needs-root
             COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=8
                     "-DEXPECT_OUTPUT=multilane: error \\(resource\\): --emu cli_nobody: multilane emu needs root \\(CAP_NET_ADMIN and CAP_SYS_ADMIN\\)"
                     -P ${MULTILANE_EXPECT} -- sh -c
                     "if [ \"$(id -u)\" = 0 ]\; then exec ${MULTILANE_SETPRIV} --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \"$@\"\; else exec \"$@\"\; fi"
                     sh $<TARGET_FILE:multilane> ${command})
  endforeach()
endif()
