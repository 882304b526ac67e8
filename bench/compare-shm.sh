#!/bin/sh
# bench/compare-shm.sh — the shared-memory layer (src/runtime/shm/) next to Open MPI's
# shared-memory transport (vader), several runs, one table of medians (docs/performance.md,
# "Shared memory (SMP)").
#
#   bench/compare-shm.sh [-n RANKS] [--runs R] [--build DIR] [-- SHM_BENCH_OPTIONS...]
#
#   -n       ranks on this one node (default 2; more than the cores adds --oversubscribe, and
#            binds ranks to cores round-robin as `multilane launch` does: unbound, the
#            scheduler's placement made runs bimodal, alltoall of 32 KiB on 4 ranks 30 or 99 us)
#   --runs   how many times shm_bench runs (default 3)
#   --build  build directory holding bench/shm_bench (default build)
#   after --, options for shm_bench itself: --collectives, --sizes, --budget, --buffer-size,
#            --pipeline-buffers, --single-copy-from, --purge-cache, --buffers, --kernel-copy-floor,
#            --cache-line-floor, ...
#
# Each run of bench/shm_bench.cpp measures both implementations alternately, repetition by
# repetition, in one MPI job (barrier, time one call, maximum over ranks, median over the
# repetitions). The table gives, per collective and size, the median over runs of each side's
# time and of the run's ratio Open MPI / ours (above 1: ours is faster), and the ratio's
# spread (lowest..highest run), the median root's share of calls that copied once (what the
# root of bcast, scatter and gather had learned to copy of the others' blocks by the end of
# the size, src/runtime/shm/root_share.hpp); with --kernel-copy-floor or --cache-line-floor also the floor's
# median, the median of each run's Open MPI / floor and which floor it is. Runs at nice -20 when allowed, so that other work on the
# machine weighs less; every run is bounded by `timeout`. Before every run it measures the
# round trip of a cache line between two cores (bench/copy_costs.cpp) and prints them with
# the table: on a virtual machine it changes by 10x when the hypervisor moves the virtual
# CPUs, and small calls and two-copy pipelines move with it.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
ranks=2
runs=3
build=build
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --) shift; break ;;
    -n|--runs|--build) [ $# -ge 2 ] || usage ;;
    *) usage ;;
  esac
  case $1 in
    -n) ranks=$2 ;;
    --runs) runs=$2 ;;
    --build) build=$2 ;;
  esac
  shift 2
done
case $build in /*) ;; *) build=$here/$build ;; esac
[ -x "$build/bench/shm_bench" ] || { echo "compare-shm: no $build/bench/shm_bench (build the shm_bench target)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
extra=
[ "$ranks" -gt "$(nproc)" ] && extra="--oversubscribe --bind-to core:overload-allowed"
nice=
nice -n -20 true 2>/dev/null && nice="nice -n -20"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
latencies=
i=1
while [ "$i" -le "$runs" ]; do
  if [ -x "$build/bench/copy_costs" ]; then
    latency=$("$build/bench/copy_costs" --latency-only | sed -n 's/^core-to-core round trip: \([0-9-]*\).*/\1/p')
    latencies="${latencies:+$latencies, }${latency:-?}"
  fi
  # shellcheck disable=SC2086
  timeout 600 $nice mpirun -n "$ranks" $extra --mca btl vader,self "$build/bench/shm_bench" "$@" \
      > "$out/run-$i.txt"
  i=$((i + 1))
done
"$python" - "$out" "$runs" "$latencies" <<'PY'
import glob, statistics, sys
rows, order, header, floors, shares = {}, [], "", {}, {}
for path in sorted(glob.glob(sys.argv[1] + "/run-*.txt")):
    for line in open(path):
        if not header and "ranks on one node" in line:
            header = line.strip()
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or not cells[2].replace(".", "").isdigit():
            continue
        key = (cells[0], cells[1])
        if key not in rows:
            order.append(key)
        rows.setdefault(key, []).append(
            (float(cells[2]), float(cells[3]), float(cells[4]), float(cells[6].rstrip("%"))))
        if cells[7] != "-":
            shares.setdefault(key, []).append(float(cells[7].rstrip("%")))
        if cells[8] != "-":
            floors.setdefault(key, []).append((float(cells[8]), float(cells[3]) / float(cells[8]), cells[9]))
print(f"{header}; median over {sys.argv[2]} runs")
if sys.argv[3]:
    print(f"core-to-core round trip before each run: {sys.argv[3]} ns (bench/copy_costs)")
print()
head = "| collective | size | ours (us) | Open MPI (us) | MPI / ours | spread | ours copied once | root's share |"
if floors:
    head += " floor (us) | MPI / floor | floor |"
print(head)
print("|---" * head.count(" |") + "|")
for key in order:
    ours, theirs, ratio, once = (statistics.median(v) for v in zip(*rows[key]))
    low, high = min(r[2] for r in rows[key]), max(r[2] for r in rows[key])
    share = f"{statistics.median(shares[key]):.1f}%" if key in shares else "-"
    line = f"| {key[0]} | {key[1]} | {ours:.2f} | {theirs:.2f} | {ratio:.2f} | {low:.2f}..{high:.2f} | {once:.0f}% | {share} |"
    if floors:
        if key in floors:
            floor = statistics.median(f[0] for f in floors[key])
            mpi_over_floor = statistics.median(f[1] for f in floors[key])
            line += f" {floor:.2f} | {mpi_over_floor:.2f} | {floors[key][0][2]} |"
        else:
            line += " - | - | - |"
    print(line)
PY
