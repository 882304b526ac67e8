#!/usr/bin/env bash
# bench/mpi-compare.sh — one unmodified MPI benchmark program (bench/mpi_peer.c) with and
# without the PMPI library, side by side on one host, and the ratio per collective and size.
#
#   bench/mpi-compare.sh [BUILD_DIR] [RANKS] [SIZES] [ROUTE]
#   (defaults: build, 8, 8,1KiB,64KiB,1MiB,16MiB, forced)
#
# Open MPI 4 (mpirun.openmpi), loopback and shared memory, oversubscribed when RANKS exceeds the
# cores. ROUTE forced: "with" forces multilane's route for every call
# (MULTILANE_ALGORITHM_<COLL>=auto), so the table shows multilane against the MPI library at
# every size; ROUTE policy: the library decides as it does by default (docs/mpi.md), which is
# what a user gets.
# ratio = without / with: above 1, multilane is faster. Alltoall's largest size is capped at 1 MiB
# per block (RANKS^2 blocks in flight).
set -euo pipefail
build=${1:-build}
ranks=${2:-8}
sizes=${3:-8,1KiB,64KiB,1MiB,16MiB}
route=${4:-forced}
peer=$build/bench/mpi_peer
library=$(cd "$build" && pwd)/libmultilane_mpi.so
for f in "$peer" "$library"; do
  [ -e "$f" ] || { echo "mpi-compare: $f is missing (cmake --build $build --target mpi_peer multilane_mpi)" >&2; exit 2; }
done
launch=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n "$ranks")
forced=()
case $route in
  forced) for coll in BCAST SCATTER GATHER ALLGATHER ALLTOALL; do forced+=(-x "MULTILANE_ALGORITHM_$coll=auto"); done ;;
  policy) ;;
  *) echo "mpi-compare: ROUTE must be forced or policy, not $route" >&2; exit 2 ;;
esac

run() {  # run COLLECTIVE SIZES [mpirun options...] -> "size median_s" lines
  local collective=$1 list=$2
  shift 2
  "${launch[@]}" "$@" "$peer" --collective "$collective" --sizes "$list" --repetitions 3 |
    python3 -c 'import json,sys
for r in json.load(sys.stdin)["results"]: print(r["size"], r["median_s"])'
}

printf '%-10s %10s %14s %14s %8s\n' collective size "MPI alone" "with library" ratio
for collective in bcast scatter gather allgather alltoall; do
  list=$sizes
  [ "$collective" = alltoall ] && list=$(echo "$sizes" | sed 's/16MiB/1MiB/; s/,1MiB,1MiB/,1MiB/')
  paste <(run "$collective" "$list") \
        <(run "$collective" "$list" -x LD_PRELOAD="$library" ${forced[@]+"${forced[@]}"}) |
    while read -r size alone _ with; do
      python3 -c "import sys
size, alone, with_ = int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print('%-10s %10d %11.1f us %11.1f us %7.2fx' % (sys.argv[1], size, alone * 1e6, with_ * 1e6, alone / with_))" \
        "$collective" "$size" "$alone" "$with"
    done
done
