#!/bin/sh
# bench/emu_compare.sh — on one emulated grid, in one run (docs/emulation.md):
#   1. multilane's real runtime (`multilane bench --emu`) next to `multilane sim` on the same
#      platform: broadcast time per algorithm, ratio real / simulated, rank of each;
#   2. Open MPI's MPI_Bcast / MPI_Scatter / MPI_Gather / MPI_Allreduce (bench/mpi_peer.c through
#      `multilane emu mpirun`) next to multilane's best algorithm on the same grid, as ratios;
#   3. the same mpi_peer with the PMPI library preloaded (libmultilane_mpi.so, its default
#      route), next to Open MPI alone and to `multilane bench --emu` running the algorithm the
#      library's route took (MULTILANE_EXPLAIN names it): what the library adds over the
#      runtime, and whether its route is the best one. The first run starts cold and writes
#      its decisions to a tuning file (MULTILANE_TUNING) that the later runs start from, as a
#      production run would: with --runs 3 or more, the median is a run from the file.
#
#   bench/emu_compare.sh [--platform FILE] [-n RANKS] [--bcast-sizes LIST] [--block-sizes LIST]
#                        [--allreduce-sizes LIST] [--allgatherv-counts LIST]
#                        [--alltoallv-counts LIST] [--collectives LIST] [--algorithms LIST]
#                        [--runs R] [--repetitions K] [--iterations I] [--build DIR]
#                        [--keep DIR] [--plot PNG]
#
#   --platform     default examples/platforms/two-sites-4x2.toml (two-sites-4x2-100m.toml: half
#                  the rates, for a busy 2-core host)
#   -n             ranks (default: one per core of the platform)
#   --bcast-sizes  default 16MiB
#   --block-sizes  scatter/gather, one rank's block (default 1MiB)
#   --allreduce-sizes  allreduce of floats with sum, the vector (default 16MiB)
#   --allgatherv-counts  the blocks of an allgatherv, one per rank (default a ramp: rank i's
#                  block is (i + 1) x 256 KiB)
#   --alltoallv-counts  the blocks of an alltoallv, p² of them, row = sender (default: from i
#                  to j, ((i + 2j) mod p + 1) x 32 KiB)
#   --collectives  which comparisons of parts 2 and 3, comma-separated, of bcast, scatter,
#                  gather, allreduce, allgatherv, alltoallv (default bcast,scatter,gather,
#                  allreduce; part 1 needs bcast)
#   --algorithms   multilane's algorithms to run, comma-separated (default all); each runs as
#                  a job of its own
#   --runs         runs of every measurement, alternating the sides (default 3); tables give
#                  the median over runs of each run's median
#   --repetitions  timed repetitions per run (default 3)
#   --iterations   calls per timed repetition, both sides (default 2: bounds the run's time)
#   --build        build directory with multilane, bench/mpi_peer and libmultilane_mpi.so
#                  (default build; without the library, part 3 is left out)
#   --keep         keep every JSON there (default: a temporary directory, removed)
#   --plot         draw part 2 there: Open MPI's bar next to the best multilane's, the winner
#                  and the ratio written on each pair (python3-matplotlib)
#
# The last lines printed are part 2's headlines, one per comparison: "bcast of 16 MiB:
# multilane (ALGORITHM) 393 ms, Open MPI 2.71 s: multilane 6.9x faster".
#
# The simulation uses the runtime's per-message cost (20 us, as its algorithm choice does), so
# both sides pick the same segment sizes. Needs root, Open MPI and bench/mpi_peer. Every
# command is bounded by `timeout`; the grid is taken down on exit, also on failure.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
platform=$here/examples/platforms/two-sites-4x2.toml
ranks=
bcast_sizes=16MiB
block_sizes=1MiB
allreduce_sizes=16MiB
allgatherv_counts=
alltoallv_counts=
collectives=bcast,scatter,gather,allreduce
algorithms=all
runs=3
repetitions=3
iterations=2
build=build
keep=
plot=
usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
    --platform) platform=$2 ;;
    -n) ranks=$2 ;;
    --bcast-sizes) bcast_sizes=$2 ;;
    --block-sizes) block_sizes=$2 ;;
    --allreduce-sizes) allreduce_sizes=$2 ;;
    --allgatherv-counts) allgatherv_counts=$2 ;;
    --alltoallv-counts) alltoallv_counts=$2 ;;
    --collectives) collectives=$2 ;;
    --algorithms) algorithms=$2 ;;
    --runs) runs=$2 ;;
    --repetitions) repetitions=$2 ;;
    --iterations) iterations=$2 ;;
    --build) build=$2 ;;
    --keep) keep=$2 ;;
    --plot) plot=$2 ;;
    *) usage ;;
  esac
  shift 2
done
for collective in $(echo "$collectives" | tr , ' '); do
  case $collective in
    bcast | scatter | gather | allreduce | allgatherv | alltoallv) ;;
    *)
      echo "emu_compare.sh: --collectives: unknown collective '$collective' (allowed: bcast," \
        "scatter, gather, allreduce, allgatherv, alltoallv)" >&2
      exit 2
      ;;
  esac
done
case $build in /*) ;; *) build=$here/$build ;; esac
case $plot in /* | '') ;; *) plot=$(pwd)/$plot ;; esac
multilane=$build/multilane
peer=$build/bench/mpi_peer
[ -x "$multilane" ] || { echo "emu_compare.sh: $multilane is missing (build it)" >&2; exit 1; }
[ -x "$peer" ] || { echo "emu_compare.sh: $peer is missing (build mpi_peer)" >&2; exit 1; }

if [ -n "$keep" ]; then
  mkdir -p "$keep"
  out=$keep
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/emu-compare-XXXXXX")
fi
name=cmp$$
cleanup() {
  "$multilane" emu down --name "$name" >/dev/null 2>&1 || true
  [ -n "$keep" ] || rm -rf "$out"
}
trap cleanup EXIT INT TERM

"$multilane" emu up "$platform" --name "$name" >/dev/null
if [ -z "$ranks" ]; then
  ranks=$("$multilane" emu hostfile --name "$name" | awk -F'slots=' '{n += $2} END {print n}')
fi
[ -n "$allgatherv_counts" ] ||
  allgatherv_counts=$(awk -v p="$ranks" 'BEGIN { for (i = 0; i < p; i++) printf "%s%dKiB", (i ? "," : ""), (i + 1) * 256 }')
[ -n "$alltoallv_counts" ] ||
  alltoallv_counts=$(awk -v p="$ranks" 'BEGIN { for (i = 0; i < p; i++) for (j = 0; j < p; j++)
    printf "%s%dKiB", (i + j ? "," : ""), ((i + 2 * j) % p + 1) * 32 }')
limit=900
# Part 3: a measured class of 1 MiB or more (every call here) explores for up to 12 calls
# (docs/mpi.md). With fewer calls per run no run decides, nothing reaches the tuning file, and
# every run times the exploration.
if [ -f "$build/libmultilane_mpi.so" ] && [ $((iterations * repetitions + 1)) -lt 12 ]; then
  echo "# note: $((iterations * repetitions + 1)) calls per run, fewer than the library's" \
    "exploration of 12: part 3 times the exploration, not the route (use --iterations 4)" >&2
fi
echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$ranks ranks on $(basename "$platform"), $runs runs x $repetitions repetitions x" \
  "$iterations calls"

# Each side's arguments for a collective's data: "--sizes LIST", or "--counts LIST" for the
# v-forms (no spaces: left unquoted on purpose).
data_of() {  # data_of COLLECTIVE
  case $1 in
    bcast) echo "--sizes $bcast_sizes" ;;
    allreduce) echo "--sizes $allreduce_sizes" ;;
    allgatherv) echo "--counts $allgatherv_counts" ;;
    alltoallv) echo "--counts $alltoallv_counts" ;;
    *) echo "--sizes $block_sizes" ;;
  esac
}
# Each algorithm runs as a job of its own, as the library's route runs it: after others in the
# same job it inherits their connections' state (binomial gathers of 1 MiB blocks on the grid
# took 208-222 ms after linear's, 160-182 ms alone).
algorithms_of() {  # algorithms_of COLLECTIVE: --algorithms, or every algorithm of COLLECTIVE
  if [ "$algorithms" != all ]; then
    echo "$algorithms" | tr , ' '
    return
  fi
  "$multilane" algorithms | awk -v c="$1" '/^[a-z]/ { mine = ($1 == c) } mine && /^  [a-z]/ { print $1 }'
}
ours() {  # ours COLLECTIVE RUN
  for algorithm in $(algorithms_of "$1"); do
    echo "# multilane bench --emu $name -n $ranks --collective $1 --algorithm $algorithm" \
      "$(data_of "$1") --iterations $iterations --repetitions $repetitions --json" >&2
    # shellcheck disable=SC2046
    timeout "$limit" "$multilane" bench --emu "$name" -n "$ranks" --collective "$1" \
      --algorithm "$algorithm" $(data_of "$1") --iterations "$iterations" \
      --repetitions "$repetitions" --json >"$out/$1-multilane-$2-$algorithm.json"
  done
}
library() {  # library COLLECTIVE RUN: mpi_peer with the PMPI library, its default route
  [ -f "$build/libmultilane_mpi.so" ] || return 0
  echo "# multilane emu mpirun --name $name -n $ranks -- -x LD_PRELOAD=libmultilane_mpi.so" \
    "-x MULTILANE_EXPLAIN=1 -x MULTILANE_TUNING=library-routes.toml mpi_peer --collective $1" \
    "$(data_of "$1") --iterations $iterations --repetitions $repetitions" >&2
  # shellcheck disable=SC2046
  timeout "$limit" "$multilane" emu mpirun --name "$name" -n "$ranks" -- \
    -x LD_PRELOAD="$build/libmultilane_mpi.so" -x MULTILANE_EXPLAIN=1 \
    -x MULTILANE_TUNING="$out/library-routes.toml" \
    "$peer" --collective "$1" $(data_of "$1") --iterations "$iterations" \
    --repetitions "$repetitions" \
    >"$out/$1-library-$2.json" 2>"$out/$1-library-$2.log"
}
theirs() {  # theirs COLLECTIVE RUN
  echo "# multilane emu mpirun --name $name -n $ranks -- mpi_peer --collective $1" \
    "$(data_of "$1") --iterations $iterations --repetitions $repetitions" >&2
  # shellcheck disable=SC2046
  timeout "$limit" "$multilane" emu mpirun --name "$name" -n "$ranks" -- \
    "$peer" --collective "$1" $(data_of "$1") --iterations "$iterations" \
    --repetitions "$repetitions" \
    >"$out/$1-openmpi-$2.json" 2>"$out/$1-openmpi-$2.log"
}

run=1
while [ "$run" -le "$runs" ]; do
  # Alternating the sides spreads the machine's other load over both.
  for collective in $(echo "$collectives" | tr , ' '); do
    ours "$collective" "$run"
    theirs "$collective" "$run"
    library "$collective" "$run"
  done
  run=$((run + 1))
done
for collective in $(echo "$collectives" | tr , ' '); do
  case $collective in bcast | allreduce) ;; *) continue ;; esac  # part 1's
  echo "# multilane sim --platform $platform --collective $collective" \
    "$(data_of "$collective") --overhead 20us --json" >&2
  # shellcheck disable=SC2046
  "$multilane" sim --platform "$platform" --collective "$collective" \
    $(data_of "$collective") --overhead 20us --json >"$out/$collective-sim.json"
done

PYTHONPATH="$here/bench/lib:$here/scripts" "$python" - "$out" "$plot" <<'EOF'
import glob, json, os, re, statistics, sys

out, plot = sys.argv[1], sys.argv[2]

from bench_text import size_text, time_text
from plot import plot_comparison, ratio_text

def measured(collective, side):
    """{(algorithm, size): (median over runs, slowest / fastest run)}"""
    runs = {}
    for path in sorted(glob.glob(os.path.join(out, f"{collective}-{side}-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for row in doc["results"]:
            if row.get("checked") and not row.get("check_ok"):
                sys.exit(f"{path}: {row['algorithm']} {row['size']}: the check failed")
            runs.setdefault((row["algorithm"], row["size"]), []).append(row["median_s"])
    return {k: (statistics.median(v), max(v) / min(v)) for k, v in runs.items()}

def ranks_of(times):
    """1 + how many are faster by more than 3%: times that close share a rank (the simulator
    gives several algorithms the very same time)."""
    return {a: 1 + sum(times[b] < times[a] / 1.03 for b in times) for a in times}

collectives = [c for c in ("bcast", "scatter", "gather", "allreduce", "allgatherv", "alltoallv")
               if glob.glob(os.path.join(out, f"{c}-openmpi-*.json"))]
for collective in (c for c in ("bcast", "allreduce") if c in collectives):
  real = measured(collective, "multilane")
  with open(os.path.join(out, f"{collective}-sim.json")) as f:
    sim = {(r["algorithm"], r["size"]): r["time_s"] for r in json.load(f)["results"]}
  print(f"\n## {collective}: real runtime on the emulated grid vs `multilane sim`\n")
  print("ratio = real / simulated; rank 1 = fastest, times within 3% share a rank "
        "(real rank / simulated rank)\n")
  for size in sorted({s for _, s in real}):
      r = {a: real[(a, s)][0] for a, s in real if s == size}
      m = {a: sim[(a, size)] for a in r if (a, size) in sim}
      rr, mr = ranks_of(r), ranks_of(m)
      print(f"\n| {size_text(size)} | real | spread | simulated | ratio | rank |")
      print("|---|---:|---:|---:|---:|---:|")
      for a in sorted(r, key=r.get):
          print(f"| {a} | {time_text(r[a])} | {real[(a, size)][1]:.2f} | {time_text(m[a])} "
                f"| {r[a] / m[a]:.2f} | {rr[a]} / {mr[a]} |")

print("\n## Open MPI vs multilane on the same grid\n")
print("ratio = Open MPI / best multilane (above 1: multilane faster)\n")
print("| collective | size | Open MPI | spread | best multilane | algorithm | ratio |")
print("|---|---:|---:|---:|---:|---|---:|")
compared = []  # (collective, size, Open MPI's time, best algorithm, its time)
for collective in collectives:
    ours, theirs = measured(collective, "multilane"), measured(collective, "openmpi")
    for size in sorted({s for _, s in theirs}):
        t = theirs[("openmpi", size)][0]
        mine = {a: v[0] for (a, s), v in ours.items() if s == size}
        best = min(mine, key=mine.get)
        compared.append((collective, size, t, best, mine[best]))
        print(f"| {collective} | {size_text(size)} | {time_text(t)} | "
              f"{theirs[('openmpi', size)][1]:.2f} | {time_text(mine[best])} | {best} | "
              f"**{t / mine[best]:.2f}** |")

print()
for collective, size, t, best, mine in compared:
    winner = "multilane" if mine < t else "Open MPI"
    print(f"{collective} of {size_text(size)}: multilane ({best}) {time_text(mine)}, Open MPI "
          f"{time_text(t)}: {winner} {ratio_text(max(t, mine) / min(t, mine))} faster")
def library_routes(collective):
    """{size: the route the library's last call of that size took in each run}, from
    MULTILANE_EXPLAIN: "MPI library" or multilane's algorithm. A call that measures a
    candidate ("measuring ...") is no route: a run that ends exploring took none."""
    function = {"bcast": "MPI_Bcast", "scatter": "MPI_Scatter", "gather": "MPI_Gather",
                "allreduce": "MPI_Allreduce", "allgatherv": "MPI_Allgatherv blocks up to",
                "alltoallv": "MPI_Alltoallv"}[collective]
    # An alltoallv's line has no size (its sizes are per rank): it is the one size measured.
    size = r"()" if collective == "alltoallv" else r" (\d+) B"
    line = re.compile(rf"multilane-mpi: {function}{size}.* ranks on .*?: "
                      r"(MPI library|multilane (\S+)) \(")
    routes = {}
    for path in sorted(glob.glob(os.path.join(out, f"{collective}-library-*.log"))):
        last = {}
        with open(path) as f:
            for m in map(line.search, f):
                if m and "(measuring " not in m.string:
                    last[int(m.group(1) or -1)] = m.group(3) or "MPI library"
        for size, route in last.items():
            routes.setdefault(size, set()).add(route)
    return routes

# The explain line's size is mpi_peer's: the whole message of a bcast and an allreduce, one
# block of a scatter and a gather.
library_rows = [c for c in collectives
                if glob.glob(os.path.join(out, f"{c}-library-*.json"))]
if library_rows:
    print("\n## The PMPI library (default route) against Open MPI and the runtime\n")
    print("library / Open MPI: above 1, the library is faster. library / runtime: the runtime's "
          "time of the algorithm the library's route took (`multilane bench --emu`) over the "
          "library's (1.00: the library adds nothing). route / best: the runtime's time of "
          "that algorithm over its best algorithm's (1.00: the route took the best).\n")
    print("| collective | size | Open MPI | library | spread | route | vs Open MPI "
          "| runtime, same algorithm | library / runtime | route / best |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for collective in library_rows:
        ours, theirs = measured(collective, "multilane"), measured(collective, "openmpi")
        lib = measured(collective, "library")
        routes = library_routes(collective)
        for size in sorted({s for _, s in lib}):
            t, mine = theirs[("openmpi", size)][0], lib[("openmpi", size)][0]
            taken = routes.get(size, routes.get(-1, {"?"}))
            route = ", ".join(sorted(taken))
            same = best = None
            runtime = {a: v[0] for (a, s), v in ours.items() if s == size}
            if runtime:
                best = min(runtime.values())
            if len(taken) == 1:
                (algorithm,) = taken
                same = t if algorithm == "MPI library" else runtime.get(algorithm)
            same_text = time_text(same) if same else "-"
            ratio_same = f"{same / mine:.2f}" if same else "-"
            route_best = f"{best / same:.2f}" if same and best else "-"
            print(f"| {collective} | {size_text(size)} | {time_text(t)} | {time_text(mine)} | "
                  f"{lib[('openmpi', size)][1]:.2f} | {route} | **{t / mine:.2f}** | {same_text} | "
                  f"{ratio_same} | {route_best} |")

if plot:
    plot_comparison([(f"{c} {size_text(s)}", f"Open MPI MPI_{c.capitalize()}", t,
                      f"multilane {best}", mine) for c, s, t, best, mine in compared],
                    plot, "Open MPI against multilane on the emulated two-site grid")
    print(f"plot: {plot}")
EOF
