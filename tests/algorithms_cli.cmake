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
  "--collective \"reduction\" is unknown: choose bcast, scatter, gather, allgather, alltoall, reduce, allreduce, reduce-scatter, scan, exscan, gatherv, scatterv, allgatherv, alltoallv or reduce-scatterv"
  schedule -c reduction)

# Two-level names `hier-shm:X` (X between the node leaders) flow wherever a name does: the
# schedule, the verifier, and the runtime on 2 nodes x 3 ranks with every byte checked; a bad
# leaders' algorithm exits 2 naming the allowed ones.
set(smp_2x3 ${examples}/smp-2x3.toml)
multilane_cli_test(cli-schedule-hier-shm-leaders 0
  "^allgather hier-shm:ring root=0 size=100 .*ranks=6 .*group-gather"
  schedule -c allgather -a hier-shm:ring --size 100 --platform ${smp_2x3})
multilane_cli_test(cli-verify-hier-shm-leaders 0 "^30 verified, 0 failed\n"
  verify --platform ${smp_2x3} --collective scatter --algorithm hier-shm:binomial --roots all)
multilane_cli_test(cli-bench-hier-shm-leaders 0
  "scatter on 6 ranks .*\n +4097 B +hier-shm:binomial .* ok\n"
  bench -n 6 --platform ${smp_2x3} --collective scatter --algorithm hier-shm:binomial
  --sizes 0,4097 --check --repetitions 1 --iterations 1 --timeout 60)
multilane_cli_test(cli-bench-hier-shm-bad-leaders 2
  "--algorithm: unknown scatter algorithm \"hier-shm:nope\": the leaders' algorithm of hier-shm must be one of linear, binomial, single-lane, multilane"
  bench -n 2 --collective scatter --algorithm hier-shm:nope)
multilane_cli_test(cli-schedule-hier-shm-not-two-level 2
  "unknown bcast algorithm \"binomial:ring\": binomial takes no leaders' algorithm \\(only hier-shm does\\)"
  schedule -a binomial:ring)
