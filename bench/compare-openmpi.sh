#!/bin/sh
# bench/compare-openmpi.sh — multilane's runtime next to Open MPI over TCP on loopback, on this
# machine, in one go (docs/performance.md, "Runtime over TCP (loopback)").
#
#   bench/compare-openmpi.sh [-n RANKS] [--collectives LIST] [--sizes LIST] [--runs R] [--no-build]
#                            [--repetitions K] [--iterations K] [--build DIR] [--keep DIR]
#
#   -n             ranks (default 8)
#   --collectives  any of bcast,scatter,gather,allgather,alltoall,reduce,allreduce,reduce-scatter
#                  (default bcast,scatter,gather,alltoall; reductions: floats with sum), and
#                  pingpong: the round trip of blocking send and receive between ranks 0 and 1
#                  (`multilane bench --pingpong`, MPI_Send/MPI_Recv)
#   --sizes        sizes for every collective (default: bcast 1KiB,1MiB,16MiB,64MiB; the others
#                  1KiB,1MiB,8MiB — `size` is one rank's block for them, as in MPI)
#   --runs         how many times each side runs, alternating (default 3); the table gives the
#                  median over runs of each run's median, and the spread max/min over runs
#   --repetitions  timed repetitions per run (default 5), passed to both
#   --iterations   calls per timed repetition, passed to both (default: per size, about 32 MiB
#                  per repetition and 1 to 1000 calls, so 1000 up to 32 KiB, 32 at 1 MiB)
#   --build        build directory with `multilane` and bench/mpi_peer (default build-perf;
#                  configured RelWithDebInfo and built when needed)
#   --no-build     use the binaries in --build as they are (no cmake; the tree may be changing)
#   --keep         directory where every run's JSON is kept (default: a temporary one, removed)
#
# Both sides use one method (tools/collective_benchmark.hpp, bench/mpi_peer.c): warm-up,
# barrier, K calls timed back to back, per-call time, maximum over ranks, median of repetitions.
# Each size runs on its own, with its own K: a repetition of small calls then lasts longer than
# the scheduler's time slice, which decides who runs when the ranks outnumber the cores.
# Open MPI: mpirun --oversubscribe --bind-to none --mca btl tcp,self --mca btl_tcp_if_include lo
# (no shared memory, unpinned like multilane's ranks). MULTILANE_* tuning variables in the
# environment reach multilane's ranks. Ratio = Open MPI's time / multilane's: above 1, multilane
# is faster. Every run is bounded by `timeout`.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
ranks=8
collectives=bcast,scatter,gather,alltoall
sizes=
runs=3
repetitions=5
iterations=
build=build-perf
keep=
build_first=1
usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  if [ "$1" = --no-build ]; then
    build_first=0
    shift
    continue
  fi
  [ $# -ge 2 ] || usage
  case $1 in
    -n) ranks=$2 ;;
    --collectives) collectives=$2 ;;
    --sizes) sizes=$2 ;;
    --runs) runs=$2 ;;
    --repetitions) repetitions=$2 ;;
    --iterations) iterations=$2 ;;
    --build) build=$2 ;;
    --keep) keep=$2 ;;
    *) usage ;;
  esac
  shift 2
done
case $build in /*) ;; *) build=$here/$build ;; esac
if [ "$build_first" = 1 ]; then
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  fi
  cmake --build "$build" -j2 --target multilane mpi_peer >/dev/null
fi
multilane=$build/multilane
peer=$build/bench/mpi_peer
[ -x "$peer" ] || { echo "compare-openmpi.sh: $peer was not built (Open MPI missing?)" >&2; exit 1; }

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  out=$keep
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/compare-openmpi-XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi

# Bytes of a size as the tools write it (8, 64KiB, 1MiB, 2GiB).
bytes_of() {
  case $1 in
    *GiB) echo $((${1%GiB} << 30)) ;;
    *MiB) echo $((${1%MiB} << 20)) ;;
    *KiB) echo $((${1%KiB} << 10)) ;;
    *[!0-9]* | "") echo "compare-openmpi.sh: --sizes: '$1' is not a size (8, 64KiB, 1MiB, 2GiB)" >&2
                   exit 2 ;;
    *) echo "$1" ;;
  esac
}

# Calls per timed repetition: about 32 MiB, 1 to 1000 calls.
calls_for() {
  bytes=$(bytes_of "$1")
  calls=$((32 * 1048576 / (bytes > 0 ? bytes : 1)))
  [ "$calls" -gt 1000 ] && calls=1000
  [ "$calls" -lt 1 ] && calls=1
  echo "$calls"
}

# A size the tools would refuse stops the script before anything runs.
for size in $(echo "${sizes:-8}" | tr , ' '); do bytes_of "$size" >/dev/null; done

# Generous bounds: a run that hangs is killed, and the script stops (set -e).
limit=1200
echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$ranks ranks, $runs runs x $repetitions repetitions"
for collective in $(echo "$collectives" | tr , ' '); do
  if [ -n "$sizes" ]; then
    list=$sizes
  elif [ "$collective" = bcast ]; then
    list=1KiB,1MiB,16MiB,64MiB
  else
    list=1KiB,1MiB,8MiB
  fi
  run=1
  while [ "$run" -le "$runs" ]; do
    # Alternating the two sides spreads the machine's other load over both.
    if [ "$collective" = pingpong ]; then
      what="--pingpong"
    else
      what="--collective $collective --algorithm all"
    fi
    for size in $(echo "$list" | tr , ' '); do
      calls=${iterations:-$(calls_for "$size")}
      name=$collective.$run.$(bytes_of "$size")
      echo "# $collective run $run: multilane bench -n $ranks $what" \
        "--sizes $size --iterations $calls --repetitions $repetitions --json" >&2
      # $what is split into its words on purpose.
      # shellcheck disable=SC2086
      timeout "$limit" "$multilane" bench -n "$ranks" $what --sizes "$size" \
        --iterations "$calls" --repetitions "$repetitions" --json >"$out/multilane-$name.json"
      echo "# $collective run $run: mpirun -n $ranks ... mpi_peer --collective $collective" \
        "--sizes $size --iterations $calls --repetitions $repetitions" >&2
      timeout "$limit" mpirun --oversubscribe --allow-run-as-root --bind-to none -n "$ranks" \
        --mca btl tcp,self --mca btl_tcp_if_include lo "$peer" --collective "$collective" \
        --sizes "$size" --iterations "$calls" --repetitions "$repetitions" \
        >"$out/openmpi-$name.json"
    done
    run=$((run + 1))
  done
done

# Merges the runs into one Markdown table per collective.
PYTHONPATH="$here/bench/lib" "$python" - "$out" "$collectives" <<'EOF'
import glob, json, os, statistics, sys

out, collectives = sys.argv[1], sys.argv[2].split(",")

from bench_text import size_text, time_text

def load(collective, side):
    """{(algorithm, size): [median of each run]}"""
    medians, ranks = {}, None
    for path in sorted(glob.glob(os.path.join(out, f"{side}-{collective}.*.json"))):
        with open(path) as f:
            doc = json.load(f)
        ranks = doc["ranks"]
        for row in doc["results"]:
            if row.get("checked") and not row.get("check_ok"):
                sys.exit(f"{path}: {row['algorithm']} {row['size']}: the check failed")
            medians.setdefault((row["algorithm"], row["size"]), []).append(row["median_s"])
    return medians, ranks

def spread(values):
    return max(values) / min(values) if min(values) > 0 else float("inf")

for collective in collectives:
    ours, ranks = load(collective, "multilane")
    mpi, _ = load(collective, "openmpi")
    sizes = sorted({size for _, size in mpi})
    algorithms = sorted({a for a, _ in ours})
    runs = len(next(iter(mpi.values())))
    print(f"\n{collective}, {ranks} ranks: median over {runs} runs; ratio = Open MPI / multilane "
          "(above 1: multilane faster); spread = slowest / fastest run")
    print("\n| size | Open MPI | spread | best multilane | algorithm | spread | ratio | "
          + " | ".join(algorithms) + " |")
    print("|---" * (7 + len(algorithms)) + "|")
    for size in sizes:
        theirs = statistics.median(mpi[("openmpi", size)])
        per_algorithm = {a: statistics.median(ours[(a, size)]) for a in algorithms
                         if (a, size) in ours}
        best = min(per_algorithm, key=per_algorithm.get)
        cells = [f"{theirs / per_algorithm[a]:.2f}" if a in per_algorithm else "-"
                 for a in algorithms]
        print(f"| {size_text(size)} | {time_text(theirs)} | {spread(mpi[('openmpi', size)]):.2f} "
              f"| {time_text(per_algorithm[best])} | {best} | {spread(ours[(best, size)]):.2f} "
              f"| **{theirs / per_algorithm[best]:.2f}** | " + " | ".join(cells) + " |")
EOF
