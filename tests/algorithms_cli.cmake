# tests/algorithms_cli.cmake — `multilane algorithms` and `multilane schedule` from the command
# line (multilane_cli_test comes from tests/cli.cmake).
set(examples ${CMAKE_SOURCE_DIR}/examples/platforms)

multilane_cli_test(cli-algorithms-lists-everything 0
  "bcast\n  linear .*multilane-sites .*\n +from: broadcast paper, sec. 3.2.*scatter\n.*multilane .*--wan-pairs.*allgather\n.*recursive-doubling.*alltoall\n.*pairwise"
  algorithms)
multilane_cli_test(cli-schedule-text 0
  "^bcast multilane root=0 size=1024 segment=256 ranks=32 .*rank 0 \\(4 ops, scratch 0\\):\n  #0 send recv\\[0,256\\) -> rank 1 lane [01]"
  schedule -c bcast -a multilane --size 1KiB --segment 256 --platform ${examples}/single-site-32.toml)
multilane_cli_test(cli-schedule-json 0
  "^{\"algorithm\":\"multilane\",\"collective\":\"scatter\".*\"wan_pairs\":4"
  schedule -c scatter -a multilane --size 4MiB --json --platform ${examples}/grid-2x32-wan5ms.toml)
multilane_cli_test(cli-schedule-unknown-algorithm 2
  "unknown bcast algorithm \"fastest\": choose one of linear, chain, binary, binomial, vandegeijn, multilane, multilane-sites, dbtree, site-binomial"
  schedule -a fastest)
multilane_cli_test(cli-schedule-bad-size 2 "size \"12XB\" does not parse" schedule --size 12XB)
multilane_cli_test(cli-schedule-bad-root 2 "root 99 is out of range: the platform has 32 ranks \\(0\\.\\.31\\)"
  schedule --root 99)
multilane_cli_test(cli-schedule-unknown-collective 2
  "--collective \"reduce\" is unknown: choose bcast, scatter, gather, allgather or alltoall"
  schedule -c reduce)
