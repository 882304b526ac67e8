# tests/shm_cli.cmake — the two-level SMP collectives (algorithm hier-shm) in real processes:
# every collective byte-checked (--check) on 2..8 ranks of one node (smp-1x8, re-placed for
# n ranks; oversubscribed on small machines) and on 2 nodes x 3 ranks emulated on loopback
# (smp-2x3: node leaders over TCP, shared memory within each node). Sizes 0, 1, 4097 and
# 1 MiB + 3 cross the shared-memory switch points (one stage below the buffer size, pipelined
# or pair-wise above).
set(shm_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)
foreach(n RANGE 2 8)
  foreach(collective IN ITEMS bcast scatter gather allgather alltoall)
    multilane_cli_test(cli-shm-check-${collective}-1x${n} 0
                       "${collective} on ${n} ranks .*\n +1048579 B +hier-shm .* ok\n"
                       bench -n ${n} --platform ${shm_platforms}/smp-1x8.toml
                       --collective ${collective} --algorithm hier-shm
                       --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1
                       --timeout 60)
  endforeach()
endforeach()

foreach(collective IN ITEMS bcast scatter gather allgather alltoall)
  multilane_cli_test(cli-shm-check-${collective}-2x3 0
                     "${collective} on 6 ranks .*\n +1048579 B +hier-shm .* ok\n"
                     bench -n 6 --platform ${shm_platforms}/smp-2x3.toml
                     --collective ${collective} --algorithm hier-shm
                     --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1
                     --timeout 60)
endforeach()
# The van de Geijn variant: scatter + allgather between the node leaders only.
multilane_cli_test(cli-shm-check-bcast-vdg-2x3 0 "\n +1048579 B +hier-shm-vdg .* ok\n"
                   bench -n 6 --platform ${shm_platforms}/smp-2x3.toml --collective bcast
                   --algorithm hier-shm-vdg --sizes 0,1,4097,1048579 --check --repetitions 1
                   --iterations 1 --timeout 60)
# The issue's acceptance command, as given.
multilane_cli_test(cli-shm-bench-smp-1x4 0 "\n +1 MiB +hier-shm .* ok\n"
                   bench -n 4 --platform ${shm_platforms}/smp-1x4.toml --collective bcast
                   --algorithm hier-shm --check)
