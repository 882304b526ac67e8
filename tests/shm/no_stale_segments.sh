#!/bin/sh
# tests/shm/no_stale_segments.sh PROGRAM ARGS... — runs PROGRAM, then fails (exit 3) if /dev/shm
# holds a multilane segment whose creator (the pid ending its name) is dead: a segment a
# failed job left behind. Otherwise exits with PROGRAM's status.
"$@"
status=$?
for path in /dev/shm/multilane-*; do
  [ -e "$path" ] || continue
  pid=${path##*-}
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "no_stale_segments: $path was left behind (its creator, pid $pid, is gone)"
    exit 3
  fi
done
exit $status
