#!/bin/sh
# tests/kill_rank_after.sh RANK SECONDS PROGRAM ARGS... — run PROGRAM as this rank; if this is
# rank RANK (from MULTILANE_RANK), kill it with SIGKILL after SECONDS. Used to test how a job
# survives a rank that dies in the middle of a collective.
rank=$1
seconds=$2
shift 2
if [ "$MULTILANE_RANK" = "$rank" ]; then
  (sleep "$seconds" && kill -KILL $$) &
fi
exec "$@"
