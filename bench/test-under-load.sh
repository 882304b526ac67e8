#!/usr/bin/env bash
# bench/test-under-load.sh [RUNS] — `make test` RUNS times in a row (default 3) in this clone,
# each with `stress-ng --cpu 2` beside it for the whole run: the suite must stay green on a busy
# 2-core machine. Stops at the first failing run.
#
# Prints one row per run: its exit status, wall time, and the 1-minute load average (median and
# maximum of a sample every 30 s). The load is bounded: stress-ng ends after 2 hours at most, and
# is stopped when its run ends, also when a run fails or the script is interrupted.
# Run it on a fresh clone (make test builds everything itself).
set -uo pipefail
runs=${1:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
scripts/install-deps.sh load >/dev/null || exit 2
logs=$(mktemp -d /tmp/multilane-test-under-load.XXXXXX)
load_pid=""
sampler_pid=""
stop_load() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null && wait "$sampler_pid" 2>/dev/null
  [ -n "$load_pid" ] && kill "$load_pid" 2>/dev/null && wait "$load_pid" 2>/dev/null
  load_pid=""
  sampler_pid=""
}
trap 'stop_load; exit 130' INT TERM
trap stop_load EXIT

printf '| run | make test | minutes | load median | load max |\n|---:|---|---:|---:|---:|\n'
for run in $(seq 1 "$runs"); do
  stress-ng --cpu 2 --timeout 7200 --quiet &
  load_pid=$!
  samples=$logs/load-$run.txt
  (while sleep 30; do cut -d' ' -f1 /proc/loadavg; done) >"$samples" &
  sampler_pid=$!
  start=$(date +%s)
  make test >"$logs/make-test-$run.log" 2>&1
  status=$?
  minutes=$(echo "scale=1; ($(date +%s) - $start) / 60" | bc)
  stop_load
  stats=$(sort -n "$samples" | awk '{v[NR]=$1} END {if (NR == 0) print "? ?"; else print v[int((NR+1)/2)], v[NR]}')
  verdict=$([ "$status" -eq 0 ] && echo passed || echo "failed ($status)")
  printf '| %d | %s | %s | %s | %s |\n' "$run" "$verdict" "$minutes" ${stats}
  if [ "$status" -ne 0 ]; then
    echo "run $run failed: see $logs/make-test-$run.log"
    exit 1
  fi
done
echo "logs: $logs"
