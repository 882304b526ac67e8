# tests/shm_cli.cmake — the two-level SMP collectives (algorithm hier-shm) in real processes:
# every collective byte-checked (--check) on 2..8 ranks of one node (smp-1x8, re-placed for
# n ranks; oversubscribed on small machines) and on 2 nodes x 3 ranks emulated on loopback
# (smp-2x3: node leaders over TCP, shared memory within each node). Sizes 0, 1, 4097 and
# 1 MiB + 3 cross the shared-memory switch points (one stage below the buffer size, pipelined
# or pair-wise above).
set(shm_platforms ${CMAKE_SOURCE_DIR}/examples/platforms)
if(MULTILANE_SANITIZE)
  set(shm_check_ranks 2 3 5 8)  # a sample, as for tests/runtime_cli.cmake's checks
else()
  set(shm_check_ranks 2 3 4 5 6 7 8)
endif()
foreach(n IN LISTS shm_check_ranks)
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

# A rank that kills itself with SIGKILL after its 3rd hier-shm broadcast of 4 MiB
# (tests/runtime/programs/dying_rank.cpp), while it holds the node's segment: the others fail within the 5 s timeout naming it ("local rank 2 (pid N)
# died"), the launcher names it, and no segment is left in /dev/shm (no_stale_segments.sh).
# On 2 x 3 the killed rank (4) is local rank 1 of the second node: its node fails through
# shared memory, the first node through TCP when that node's leader is gone.
foreach(shape IN ITEMS 1x4:4:2:2 2x3:6:4:1)
  string(REPLACE ":" ";" parts ${shape})
  list(GET parts 0 name)
  list(GET parts 1 ranks)
  list(GET parts 2 victim)
  list(GET parts 3 local)
  add_test(NAME cli-shm-rank-killed-${name}
           COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                   "-DEXPECT_OUTPUT=(local rank ${local} \\(pid [0-9]+\\) died.*rank ${victim} \\(pid [0-9]+\\) was killed by signal 9)|(rank ${victim} \\(pid [0-9]+\\) was killed by signal 9.*local rank ${local} \\(pid [0-9]+\\) died)"
                   "-DREJECT_OUTPUT=left behind"
                   -P ${MULTILANE_EXPECT} --
                   ${CMAKE_SOURCE_DIR}/tests/shm/no_stale_segments.sh
                   $<TARGET_FILE:multilane> launch -n ${ranks}
                   --platform ${shm_platforms}/smp-${name}.toml --timeout 5 --
                   $<TARGET_FILE:dying_rank> ${victim} calls 3 hier-shm)
  set_tests_properties(cli-shm-rank-killed-${name} PROPERTIES TIMEOUT 60)
endforeach()

# multilane tune shm: the quick sweep writes a tuning file and prints the gains; bad lists are
# refused naming the option.
multilane_cli_test(cli-shm-tune-quick 0
                   "gain\n(.*\n)*bcast +1 KiB .*x\n(.*\n)*alltoall +8 KiB .*x\nwrote .*shm-tuning\\.toml"
                   tune shm -n 2 --quick -o ${CMAKE_CURRENT_BINARY_DIR}/shm-tuning.toml)
# Every size is tried both ways, copying once (cross-memory attach) and twice through the
# buffers, and the row says which won: once, with no buffer, or twice, with the only geometry
# of this grid. (A kernel that refuses cross-memory copies leaves only "twice".)
multilane_cli_test(cli-shm-tune-single-copy 0
                   "scatter +1 MiB +(once +- +-|twice +4 KiB +2) +[0-9.]+ [mu]s +[0-9.]+ [mu]s +[0-9.]+x\n"
                   tune shm -n 2 --collectives scatter --sizes 1MiB --buffer-sizes 4KiB
                   --depths 2 --iterations 1 --repetitions 1 -o ${CMAKE_CURRENT_BINARY_DIR}/shm-tuning-1m.toml)
multilane_cli_test(cli-shm-tune-bad-depth 2 "pipeline depth 65 is outside 1\\.\\.64"
                   tune shm --depths 2,65)
# The runtime reads MULTILANE_TUNING: tiny buffers (64 bytes, 2 deep) keep every byte right;
# a malformed file fails the job naming its line and key.
add_test(NAME cli-shm-bench-with-tuning-file
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=0 "-DEXPECT_OUTPUT=\n +4097 B +hier-shm .* ok\n"
                 -P ${MULTILANE_EXPECT} -- ${CMAKE_COMMAND} -E env
                 MULTILANE_TUNING=${CMAKE_SOURCE_DIR}/tests/shm/tuning_tiny_buffers.toml
                 $<TARGET_FILE:multilane> bench -n 4 --platform ${shm_platforms}/smp-1x4.toml
                 --collective bcast --algorithm hier-shm --sizes 1,4097 --check
                 --repetitions 1 --iterations 1 --timeout 60)
add_test(NAME cli-shm-bench-bad-tuning-file
         COMMAND ${CMAKE_COMMAND} -DEXPECT_EXIT=nonzero
                 "-DEXPECT_OUTPUT=tuning_bad\\.toml:5: buffer_size: 8 is outside 64\\.\\."
                 -P ${MULTILANE_EXPECT} -- ${CMAKE_COMMAND} -E env
                 MULTILANE_TUNING=${CMAKE_SOURCE_DIR}/tests/shm/tuning_bad.toml
                 $<TARGET_FILE:multilane> bench -n 2 --platform ${shm_platforms}/smp-1x4.toml
                 --collective bcast --algorithm hier-shm --sizes 1 --timeout 60)
# --tuning FILE on bench and launch: the file is read before any rank starts (usage error naming
# its line and key) and reaches the ranks as MULTILANE_TUNING.
multilane_cli_test(cli-shm-bench-tuning-option 0 "\n +4097 B +hier-shm .* ok\n"
                   bench -n 4 --platform ${shm_platforms}/smp-1x4.toml --collective bcast
                   --algorithm hier-shm --sizes 4097 --check --repetitions 1 --iterations 1
                   --tuning ${CMAKE_SOURCE_DIR}/tests/shm/tuning_tiny_buffers.toml)
multilane_cli_test(cli-shm-bench-tuning-option-bad 2
                   "tuning_bad\\.toml:5: buffer_size: 8 is outside 64\\.\\."
                   bench -n 2 --tuning ${CMAKE_SOURCE_DIR}/tests/shm/tuning_bad.toml)
multilane_cli_test(cli-shm-launch-tuning-option-bad 2
                   "tuning_bad\\.toml:5: buffer_size: 8 is outside 64\\.\\."
                   launch -n 2 --tuning ${CMAKE_SOURCE_DIR}/tests/shm/tuning_bad.toml -- true)

# Buffers from SharedBuffer (bench --shared-buffers): the ranks of a node copy each other's
# with memcpy through a mapping instead of the kernel. Every collective byte-checked on 4 ranks
# of one node with hier-shm, and every algorithm of allgather (the TCP ones take the same
# memory as any other).
foreach(collective IN ITEMS bcast scatter gather allgather alltoall)
  multilane_cli_test(cli-shm-shared-buffers-${collective} 0
                     "${collective} on 4 ranks .*\n +1048579 B +hier-shm .* ok\n"
                     bench -n 4 --platform ${shm_platforms}/smp-1x4.toml
                     --collective ${collective} --algorithm hier-shm --shared-buffers
                     --sizes 0,1,4097,1048579 --check --repetitions 1 --iterations 1
                     --timeout 60)
endforeach()
multilane_cli_test(cli-shm-shared-buffers-every-allgather 0
                   "\n +4097 B +ring .* ok\n(.*\n)* +4097 B +hier-shm .* ok\n"
                   bench -n 4 --platform ${shm_platforms}/smp-1x4.toml --collective allgather
                   --algorithm all --shared-buffers --sizes 4097 --check --repetitions 1
                   --iterations 1 --timeout 60)
