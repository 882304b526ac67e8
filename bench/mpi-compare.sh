#!/usr/bin/env bash
# bench/mpi-compare.sh — one unmodified MPI benchmark program (bench/mpi_peer.c) with and
# without the PMPI library, side by side in one run, and the ratio per collective and size.
#
#   bench/mpi-compare.sh [options] [BUILD_DIR] [RANKS] [SIZES] [ROUTE]
#     BUILD_DIR    default build
#     RANKS        default 8
#     SIZES        default 8,1KiB,64KiB,1MiB,16MiB (bytes per call; per block for scatter,
#                  gather, allgather and alltoall)
#     ROUTE        forced (default): MULTILANE_ALGORITHM_<COLL>=auto sends every call to
#                  multilane, so the table shows multilane against the MPI library at every
#                  size; policy: the library decides as it does by default (docs/mpi.md), which
#                  is what a user gets.
#     --collectives LIST   default bcast,scatter,gather,allgather,alltoall (also reduce,
#                          allreduce, reduce-scatter, scan, exscan: floats, sum); NAME=SIZE measures that
#                          collective at SIZE only (bcast=16MiB,scatter=1MiB)
#     --emu PLATFORM       run on an emulated grid of PLATFORM (multilane emu up; as root),
#                          through `multilane emu mpirun`: ranks one per core across its nodes,
#                          MPI over TCP on the lanes, the library discovering nodes, lanes and
#                          sites by itself (no MULTILANE_PLATFORM). The grid is taken down at
#                          the end, also on failure.
#     --repetitions R      default 3: each figure is the median of R timed runs
#
# Without --emu: Open MPI 4 (mpirun.openmpi) on this host, loopback and shared memory,
# oversubscribed when RANKS exceeds the cores. ratio = without / with: above 1, the library is
# faster. Alltoall's largest size is capped at 1 MiB per block (RANKS^2 blocks in flight).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
collectives=bcast,scatter,gather,allgather,alltoall
emu_platform=""
repetitions=3
positional=()
while [ $# -gt 0 ]; do
  case $1 in
    --collectives) collectives=$2; shift 2 ;;
    --emu) emu_platform=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    -*) echo "mpi-compare: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
build=${positional[0]:-build}
ranks=${positional[1]:-8}
sizes=${positional[2]:-8,1KiB,64KiB,1MiB,16MiB}
route=${positional[3]:-forced}
peer=$(cd "$build" && pwd)/bench/mpi_peer
library=$(cd "$build" && pwd)/libmultilane_mpi.so
for f in "$peer" "$library"; do
  [ -e "$f" ] || { echo "mpi-compare: $f is missing (cmake --build $build --target mpi_peer multilane_mpi)" >&2; exit 2; }
done
forced=()
case $route in
  forced)
    for coll in BCAST SCATTER GATHER ALLGATHER ALLTOALL REDUCE ALLREDUCE REDUCE_SCATTER_BLOCK SCAN EXSCAN; do
      forced+=(-x "MULTILANE_ALGORITHM_$coll=auto")
    done ;;
  policy) ;;
  *) echo "mpi-compare: ROUTE must be forced or policy, not $route" >&2; exit 2 ;;
esac

. "$here/lib/mpi_launch.sh"
mpi_launch_setup "$build" "$ranks" "$emu_platform"

run() {  # run COLLECTIVE SIZES [mpirun options...] -> "size median_s" lines
  local collective=$1 list=$2
  shift 2
  "${launch[@]}" "$@" "$peer" --collective "$collective" --sizes "$list" \
    --repetitions "$repetitions" |
    /usr/bin/python3 -c 'import json,sys
for r in json.load(sys.stdin)["results"]: print(r["size"], r["median_s"])'
}

printf '%-14s %10s %14s %14s %8s\n' collective size "MPI alone" "with library" ratio
for entry in ${collectives//,/ }; do
  collective=${entry%%=*}
  list=$sizes
  [ "$collective" = alltoall ] && list=$(echo "$sizes" | sed 's/16MiB/1MiB/; s/,1MiB,1MiB/,1MiB/')
  [ "$entry" != "$collective" ] && list=${entry#*=}
  # One after the other: side by side in one run, never at the same time.
  alone=$(run "$collective" "$list")
  with=$(run "$collective" "$list" -x LD_PRELOAD="$library" ${forced[@]+"${forced[@]}"})
  paste <(echo "$alone") <(echo "$with") |
    while read -r size alone _ with; do
      /usr/bin/python3 -c "import sys
size, alone, with_ = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print('%-14s %10d %11.1f us %11.1f us %7.2fx' % (sys.argv[1], size, alone * 1e6, with_ * 1e6, alone / with_))" \
        "$collective" "$size" "$alone" "$with"
    done
done
