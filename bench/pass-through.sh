#!/bin/sh
# bench/pass-through.sh — what the PMPI library adds to a call it leaves to the MPI library
# (docs/performance.md, "What a served call costs"): bench/pass_through.c run without and with
# the library, in interleaved pairs, and the medians of each.
#
#   bench/pass-through.sh [-n RANKS] [--pairs N] [--build DIR]
#
#   -n       ranks (default 1: the MPI library's own call is then shortest, and what the
#            library adds shows best)
#   --pairs  how many pairs of runs, plain then preloaded (default 5)
#   --build  build directory holding libmultilane_mpi.so and bench/pass_through (default build)
#
# The preloaded runs set MULTILANE_ALGORITHM_ALLREDUCE=mpi, so the allreduce's route is the MPI
# library's from its first call (as a class decided by measurement is); the reduce-scatter-block
# of 0 elements moves no data and passes before any look-up.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=1
pairs=5
build=build
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--pairs|--build) [ $# -ge 2 ] || usage ;;
    *) usage ;;
  esac
  case $1 in
    -n) ranks=$2 ;;
    --pairs) pairs=$2 ;;
    --build) build=$2 ;;
  esac
  shift 2
done
case $build in /*) ;; *) build=$here/$build ;; esac
program=$build/bench/pass_through
library=$build/libmultilane_mpi.so
[ -x "$program" ] || { echo "pass-through: no $program (build the pass_through target)" >&2; exit 2; }
[ -f "$library" ] || { echo "pass-through: no $library (build the multilane_mpi target)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch="mpirun.openmpi --oversubscribe --bind-to none -n $ranks"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=1
while [ "$i" -le "$pairs" ]; do
  timeout 300 $launch "$program" >> "$out/plain"
  timeout 300 $launch -x LD_PRELOAD="$library" -x MULTILANE_ALGORITHM_ALLREDUCE=mpi "$program" \
    >> "$out/preloaded"
  i=$((i + 1))
done
/usr/bin/python3 - "$out/plain" "$out/preloaded" "$ranks" "$pairs" <<'PY'
import re, statistics, sys
def read(path):
    runs = {}
    for line in open(path):
        m = re.match(r"(.*): ([0-9.]+) ns$", line.strip())
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)))
    return runs
plain, preloaded = read(sys.argv[1]), read(sys.argv[2])
print(f"{sys.argv[3]} rank(s), {sys.argv[4]} pairs, medians (range), ns per call")
print("| call | MPI library alone | with the PMPI library | added |")
print("|---|---:|---:|---:|")
for call, times in plain.items():
    a, b = statistics.median(times), statistics.median(preloaded[call])
    print(f"| {call} | {a:.1f} ({min(times):.1f}-{max(times):.1f}) | {b:.1f} "
          f"({min(preloaded[call]):.1f}-{max(preloaded[call]):.1f}) | {b - a:+.1f} |")
PY
