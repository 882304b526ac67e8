# tests/launch_cli.cmake — acceptance tests of `multilane launch`.
# Included by the top CMakeLists.txt after tests/cli.cmake (uses multilane_cli_test).
# Scripts avoid semicolons: CMake would split the argument there.
set(launch_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)

multilane_cli_test(cli-launch-runs 0 "rank 2 of 3" launch -n 3 -- /bin/sh -c
                   "echo rank $MULTILANE_RANK of $MULTILANE_SIZE")
multilane_cli_test(cli-launch-tag-output 0 "\\[rank 1\\] hello from 1\n" launch -n 2 --tag-output
                   -- /bin/sh -c "echo hello from $MULTILANE_RANK")
multilane_cli_test(cli-launch-platform 0 "/examples/platforms/two-sites-4x2\\.toml" launch -n 4
                   --platform ${launch_platforms}/two-sites-4x2.toml -- /bin/sh -c
                   "echo $MULTILANE_PLATFORM")

# A failing rank: named with its pid and how it ended; the exit status is its code (or 128 +
# the signal), and the others are terminated after the timeout + grace.
multilane_cli_test(cli-launch-exit-code 3 "multilane launch: rank 1 \\(pid [0-9]+\\) exited with code 3"
                   launch -n 3 -- /bin/sh -c "[ $MULTILANE_RANK = 1 ] && exit 3 || exit 0")
multilane_cli_test(cli-launch-killed 137
                   "rank 1 \\(pid [0-9]+\\) was killed by signal 9 \\(SIGKILL\\).*ranks 0, 2 still running 0\\.5 s after the first failure: sending SIGTERM"
                   launch -n 3 --timeout 0.3 --grace 0.2 -- /bin/sh -c
                   "[ $MULTILANE_RANK = 1 ] && kill -KILL $$ || sleep 5")

# Bad arguments: exit status 2 and a message naming the argument and what is allowed.
multilane_cli_test(cli-launch-bad-ranks 2 "--ranks: Value 0 not in range 1 to 4096" launch -n 0
                   -- true)
multilane_cli_test(cli-launch-too-many-ranks 2 "--ranks: Value 4097 not in range 1 to 4096" launch
                   -n 4097 -- true)
multilane_cli_test(cli-launch-no-program 2 "PROGRAM is required" launch -n 2)
multilane_cli_test(cli-launch-not-executable 2
                   "cannot execute 'no-such-program-for-multilane': not found in PATH" launch -n 2
                   -- no-such-program-for-multilane)
multilane_cli_test(cli-launch-platform-too-small 2
                   "single-site-32\\.toml: cannot place 40 ranks on 32 cores" launch -n 40
                   --platform ${launch_platforms}/single-site-32.toml -- true)
multilane_cli_test(cli-launch-missing-platform 2 "no-such-platform\\.toml: cannot open" launch -n 2
                   --platform no-such-platform.toml -- true)
multilane_cli_test(cli-launch-bad-timeout 2
                   "--timeout 0 is not allowed: must be a number of seconds > 0" launch -n 2
                   --timeout 0 -- true)

# Binding: with --bind-to core every rank may run on exactly one processing unit (the ranks'
# lines come in either order); a bad value names the allowed ones.
multilane_cli_test(cli-launch-bind-to-core 0 "\\[rank [01]\\] Cpus_allowed_list:[ \t]+[0-9]+\n\\[rank [01]\\] Cpus_allowed_list:[ \t]+[0-9]+\n"
                   launch -n 2 --bind-to core --tag-output -- /bin/sh -c
                   "grep Cpus_allowed_list /proc/self/status")
multilane_cli_test(cli-launch-bad-bind-to 2 "--bind-to: socket not in \\{auto,core,none\\}"
                   launch -n 2 --bind-to socket -- true)
