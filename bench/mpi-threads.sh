#!/usr/bin/env bash
# bench/mpi-threads.sh — calls on different communicators from different threads at once: one
# call alone against N at once (each thread on its own duplicate of MPI_COMM_WORLD), for the MPI
# library alone and with the PMPI library, side by side in one run (bench/mpi_peer.c --threads).
#
#   bench/mpi-threads.sh [options] [BUILD_DIR] [RANKS] [SIZES] [ROUTE]
#     BUILD_DIR    default build
#     RANKS        default 8
#     SIZES        default 8,64KiB,1MiB,16MiB (bytes per call)
#     ROUTE        forced (default): MULTILANE_ALGORITHM_<COLL>=auto; policy: the library's own route
#                  (whose first calls of a class explore: give it a MULTILANE_TUNING file)
#     --collective NAME    default allreduce (floats, sum); any collective of mpi_peer
#     --threads N          default 2: calls at once
#     --emu PLATFORM       on an emulated grid of PLATFORM, as bench/mpi-compare.sh
#     --repetitions R      default 5: each figure is the median of R timed runs
#
# Per size: the time of one call (--threads 1) and of N at once (--threads N), and at once / one:
# 1.0 when the calls overlap fully, N when they are serialised, or when one call alone already
# fills what they share (a WAN link, the cores).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
collective=allreduce
threads=2
emu_platform=""
repetitions=5
positional=()
while [ $# -gt 0 ]; do
  case $1 in
    --collective) collective=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --emu) emu_platform=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "mpi-threads: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
build=${positional[0]:-build}
ranks=${positional[1]:-8}
sizes=${positional[2]:-8,64KiB,1MiB,16MiB}
route=${positional[3]:-forced}
peer=$(cd "$build" && pwd)/bench/mpi_peer
library=$(cd "$build" && pwd)/libmultilane_mpi.so
for f in "$peer" "$library"; do
  [ -e "$f" ] || { echo "mpi-threads: $f is missing (cmake --build $build --target mpi_peer multilane_mpi)" >&2; exit 2; }
done
with=(-x LD_PRELOAD="$library")
case $route in
  forced) with+=(-x "MULTILANE_ALGORITHM_$(echo "$collective" | tr 'a-z-' 'A-Z_')=auto") ;;
  policy) ;;
  *) echo "mpi-threads: ROUTE must be forced or policy, not $route" >&2; exit 2 ;;
esac
. "$here/lib/mpi_launch.sh"
mpi_launch_setup "$build" "$ranks" "$emu_platform"

run() {  # run THREADS [mpirun options...] -> "size median_s" lines
  local n=$1
  shift
  "${launch[@]}" "$@" "$peer" --collective "$collective" --sizes "$sizes" \
    --repetitions "$repetitions" --threads "$n" --check |
    /usr/bin/python3 -c 'import json,sys
for r in json.load(sys.stdin)["results"]:
    assert r["check_ok"], r
    print(r["size"], r["median_s"])'
}

# One after the other, never at the same time.
alone_one=$(run 1)
alone_many=$(run "$threads")
with_one=$(run 1 "${with[@]}")
with_many=$(run "$threads" "${with[@]}")
printf '%-10s %12s %12s %8s %12s %12s %8s\n' size "MPI: one" "$threads at once" ratio \
  "library: one" "$threads at once" ratio
paste <(echo "$alone_one") <(echo "$alone_many") <(echo "$with_one") <(echo "$with_many") |
  while read -r size a1 _ an _ w1 _ wn; do
    PYTHONPATH=$here/lib /usr/bin/python3 -c "import sys
from bench_text import size_text, time_text
size, a1, an, w1, wn = int(sys.argv[1]), *map(float, sys.argv[2:])
print('%-10s %12s %12s %7.2fx %12s %12s %7.2fx' % (size_text(size), time_text(a1), time_text(an),
      an / a1, time_text(w1), time_text(wn), wn / w1))" "$size" "$a1" "$an" "$w1" "$wn"
  done
