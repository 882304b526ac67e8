#!/usr/bin/env bash
# scripts/fuzz-run.sh BUILD [SECONDS] [RUNS] — fuzzes every target that `make fuzz` built in
# BUILD/fuzz (tests/fuzz.cmake), each for at most SECONDS (default 60) or RUNS inputs (default
# 10000000), whichever comes first, starting from its corpus in tests/fuzz/corpus/<target>.
#
# New inputs go to BUILD/fuzz-corpus/<target> (the tree's corpus is only read); an input that
# crashes, leaks, breaks a property or runs over 5 s goes to BUILD/fuzz-findings/<target>/:
# fix the cause and copy the input into the tree's corpus, where `make test` replays it.
# Prints per target: inputs run, coverage (edges), corpus size, and the findings. Exit status 1
# when a target found something.
set -uo pipefail
build=${1:?usage: scripts/fuzz-run.sh BUILD [SECONDS] [RUNS]}
seconds=${2:-60}
runs=${3:-10000000}
source_dir=$(cd "$(dirname "$0")/.." && pwd)
status=0
printf '| target | inputs | edges | corpus | findings |\n|---|---:|---:|---:|---|\n'
for binary in "$build"/fuzz/fuzz_*; do
  [ -x "$binary" ] || continue
  name=${binary##*/fuzz_}
  corpus=$build/fuzz-corpus/$name
  findings=$build/fuzz-findings/$name
  mkdir -p "$corpus" "$findings"
  log=$build/fuzz-findings/$name.log
  "$binary" -max_total_time="$seconds" -runs="$runs" -timeout=5 -rss_limit_mb=2048 \
    -artifact_prefix="$findings/" -print_final_stats=1 \
    "$corpus" "$source_dir/tests/fuzz/corpus/$name" >"$log" 2>&1
  code=$?
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  edges=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  size=$(find "$corpus" "$source_dir/tests/fuzz/corpus/$name" -type f | wc -l)
  found=$(find "$findings" -type f | wc -l)
  verdict="none"
  if [ "$code" -ne 0 ] || [ "$found" -gt 0 ]; then
    verdict="$found in $findings (log: $log)"
    status=1
  fi
  printf '| %s | %s | %s | %s | %s |\n' "$name" "${inputs:-?}" "${edges:-?}" "$size" "$verdict"
done
exit $status
