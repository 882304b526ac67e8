#!/bin/sh
# bench/pass-through.sh — what the PMPI library adds to a call it leaves to the MPI library
# (docs/performance.md, "What a served call costs"): bench/pass_through.c run without and with
# the library, in interleaved pairs, and the medians of each.
#
#   bench/pass-through.sh [-n RANKS] [--pairs N] [--build DIR] [--family ompi|mpich]
#
#   -n        ranks (default 1: the MPI library's own call is then shortest, and what the
#             library adds shows best)
#   --pairs   how many pairs of runs, plain then preloaded (default 5)
#   --build   build directory holding the library and bench/pass_through (default build)
#   --family  ompi (default: libmultilane_mpi.so, bench/pass_through, mpirun.openmpi) or mpich
#             (libmultilane_mpich.so, bench/pass_through_mpich, mpiexec.mpich)
#
# The preloaded runs set MULTILANE_ALGORITHM_ALLREDUCE=mpi, so the allreduce's route is the MPI
# library's from its first call (as a class decided by measurement is); the reduce-scatter-block
# of 0 elements moves no data and passes before any look-up.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=1
pairs=5
build=build
family=ompi
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -n|--pairs|--build|--family) [ $# -ge 2 ] || usage ;;
    *) usage ;;
  esac
  case $1 in
    -n) ranks=$2 ;;
    --pairs) pairs=$2 ;;
    --build) build=$2 ;;
    --family) family=$2 ;;
  esac
  shift 2
done
case $build in /*) ;; *) build=$here/$build ;; esac
case $family in
  ompi)
    program=$build/bench/pass_through
    library=$build/libmultilane_mpi.so ;;
  mpich)
    program=$build/bench/pass_through_mpich
    library=$build/libmultilane_mpich.so ;;
  *) echo "pass-through: --family must be ompi or mpich, not '$family'" >&2; exit 2 ;;
esac
[ -x "$program" ] || { echo "pass-through: no $program (build it)" >&2; exit 2; }
[ -f "$library" ] || { echo "pass-through: no $library (build it)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# plain | preloaded: one run of the program.
run() {
  if [ "$family" = ompi ]; then
    if [ "$1" = plain ]; then
      timeout 300 mpirun.openmpi --oversubscribe --bind-to none -n "$ranks" "$program"
    else
      timeout 300 mpirun.openmpi --oversubscribe --bind-to none -n "$ranks" \
        -x LD_PRELOAD="$library" -x MULTILANE_ALGORITHM_ALLREDUCE=mpi "$program"
    fi
  elif [ "$1" = plain ]; then
    timeout 300 mpiexec.mpich -n "$ranks" "$program"
  else
    timeout 300 mpiexec.mpich -n "$ranks" -genv LD_PRELOAD "$library" \
      -genv MULTILANE_ALGORITHM_ALLREDUCE mpi "$program"
  fi
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
i=1
fail() {
  echo "pass-through: a $1 run failed or took over 300 s (MPICH's ranks poll without yielding:" \
    "with more ranks than cores each call can take milliseconds; use fewer ranks)" >&2
  exit 1
}
while [ "$i" -le "$pairs" ]; do
  run plain >> "$out/plain" || fail plain
  run preloaded >> "$out/preloaded" || fail preloaded
  i=$((i + 1))
done
/usr/bin/python3 - "$out/plain" "$out/preloaded" "$ranks" "$pairs" "$family" <<'PY'
import re, statistics, sys
def read(path):
    runs = {}
    for line in open(path):
        m = re.match(r"(.*): ([0-9.]+) ns$", line.strip())
        if m:
            runs.setdefault(m.group(1), []).append(float(m.group(2)))
    return runs
plain, preloaded = read(sys.argv[1]), read(sys.argv[2])
family = {"ompi": "Open MPI", "mpich": "MPICH"}[sys.argv[5]]
print(f"{family}, {sys.argv[3]} rank(s), {sys.argv[4]} pairs, medians (range), ns per call")
print("| call | MPI library alone | with the PMPI library | added |")
print("|---|---:|---:|---:|")
for call, times in plain.items():
    a, b = statistics.median(times), statistics.median(preloaded[call])
    print(f"| {call} | {a:.1f} ({min(times):.1f}-{max(times):.1f}) | {b:.1f} "
          f"({min(preloaded[call]):.1f}-{max(preloaded[call]):.1f}) | {b - a:+.1f} |")
PY
