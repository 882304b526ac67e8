# tests/verify_cli.cmake — acceptance tests of `multilane verify`.
# Included by the top CMakeLists.txt after tests/cli.cmake (uses multilane_cli_test).
set(verify_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)

# The acceptance commands: every collective and algorithm on the two-site example, and 500
# random cases; both must end with "N verified, 0 failed" and no failure line.
multilane_cli_test(cli-verify-two-sites 0 "^[1-9][0-9]* verified, 0 failed\n$" verify
                   --platform ${verify_platforms}/two-sites-16x2.toml --collective all
                   --algorithm all --sizes 0,1,7,1000,1048577)
multilane_cli_test(cli-verify-random 0 "^500 verified, 0 failed\n$" verify --random 500 --seed 7)
multilane_cli_test(cli-verify-default 0 "^[1-9][0-9]* verified, 0 failed\n$" verify)
multilane_cli_test(cli-verify-all-roots 0 "^[1-9][0-9]* verified, 0 failed\n$" verify
                   --platform ${verify_platforms}/two-sites-4x2.toml --roots all
                   --sizes 0,1,1000 --segments 1,7,4096)
multilane_cli_test(cli-verify-verbose 0 "ok +bcast/multilane p=16 root=3 size=1000 segment=7: [0-9]+ ops"
                   verify --ranks 16 --collective bcast --algorithm multilane --roots 3
                   --sizes 1000 --segments 7 --verbose)

# Bad arguments: exit status 2 and a message naming the argument and what is allowed.
multilane_cli_test(cli-verify-bad-collective 2 "--collective: unknown collective \"bcst\".*allgather" verify
                   --collective bcst)
multilane_cli_test(cli-verify-bad-algorithm 2 "--algorithm: unknown bcast algorithm \"foo\": choose all or one of linear, chain" verify
                   --collective bcast --algorithm foo)
multilane_cli_test(cli-verify-bad-root 2 "--roots: root 99 is out of range.*0\\.\\.31" verify --roots 0,99)
multilane_cli_test(cli-verify-bad-size 2 "--sizes: .*12XB" verify --sizes 1,12XB)
multilane_cli_test(cli-verify-bad-segment 2 "--segments: a segment must be at least 1 byte" verify
                   --segments 0)
multilane_cli_test(cli-verify-bad-ranks 2 "--ranks 999 is out of range" verify --ranks 999)
multilane_cli_test(cli-verify-missing-platform 2 "no-such-file" verify --platform no-such-file.toml)

# Reductions with 8-byte elements on the uneven-free two-site grid; a size that is not a whole
# number of elements is refused with the option's name.
multilane_cli_test(cli-verify-reductions-double 0 "^[1-9][0-9]* verified, 0 failed\n$" verify
                   --platform ${verify_platforms}/two-sites-16x2.toml --collective allreduce
                   --type double --sizes 0,8,56,8000,1048584 --roots all)
multilane_cli_test(cli-verify-reductions-bad-size 2
                   "--sizes: 7 bytes is not a whole number of double elements \\(8 bytes each\\)"
                   verify --collective reduce --type double --sizes 8,7)

# The v-forms: every algorithm of each, 500 random cases with random uneven counts (a quarter
# of the blocks empty); the sweep's patterns on the two-site example; a bad pattern is named.
foreach(v IN ITEMS gatherv scatterv allgatherv alltoallv)
  multilane_cli_test(cli-verify-random-${v} 0 "^500 verified, 0 failed\n$" verify
                     --collective ${v} --algorithm all --random 500 --seed 3)
endforeach()
multilane_cli_test(cli-verify-uneven-patterns 0 "^[1-9][0-9]* verified, 0 failed\n$" verify
                   --platform ${verify_platforms}/two-sites-4x2.toml --collective allgatherv
                   --algorithm all --roots all --sizes 0,1,7,1000 --counts ramp,zeros,one-huge)
multilane_cli_test(cli-verify-bad-counts 2
                   "--counts: unknown pattern \"even\": choose ramp, zeros or one-huge" verify
                   --collective gatherv --counts ramp,even)
