#!/bin/sh
# tests/mpi/remove_dead_segments.sh PROGRAM ARGS... — runs PROGRAM (an MPI job that aborts),
# then removes the multilane shared-memory segments in /dev/shm whose creator (the pid ending
# the name) is dead and that appeared while PROGRAM ran: an MPI launcher kills the ranks of an
# aborted job with SIGKILL, so a rank that made a segment may die before it unlinks it
# (docs/mpi.md, limits). Run serially, so that no other test's segment is touched. Exits with
# PROGRAM's status.
marker=$(mktemp)
"$@"
status=$?
for path in /dev/shm/multilane-*; do
  [ -e "$path" ] || continue
  [ "$path" -nt "$marker" ] || continue
  pid=${path##*-}
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "remove_dead_segments: removing $path (its creator, pid $pid, was killed)"
    rm -f "$path"
  fi
done
rm -f "$marker"
exit $status
