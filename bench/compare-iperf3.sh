#!/bin/sh
# bench/compare-iperf3.sh — multilane's point-to-point throughput next to iperf3's on loopback,
# per stream count (docs/performance.md, "Runtime over TCP (loopback)").
#
#   bench/compare-iperf3.sh [--streams LIST] [--size SIZE] [--runs R] [--seconds S]
#                           [--build DIR] [--keep DIR] [--no-build]
#
#   --streams  stream counts (default 1,2,4,8): multilane's K streams per peer, iperf3's -P K
#   --size     bytes per multilane transfer (default 256MiB)
#   --runs     how many times each side runs, alternating (default 3); the table gives the
#              median over runs, and the spread max/min over runs
#   --seconds  length of each iperf3 test, -t (default 2)
#   --build    build directory with `multilane` (default build-perf; configured and built if needed)
#   --no-build use the binary in --build as it is (no cmake; the tree may be changing)
#   --keep     directory where every run's JSON is kept (default: a temporary one, removed)
#
# multilane: `multilane bench -n 2 --p2p --streams LIST --size SIZE --json`, the median of 5
# one-way transfers of SIZE (rank 0 sends, rank 1 answers one byte when all arrived) into a
# receive buffer of SIZE. iperf3: a server on a free loopback port (killed at the end, also on
# failure), `iperf3 -c 127.0.0.1 -P K -t S -J`, throughput at the receiver. Ratio = multilane /
# iperf3; the goal is multilane at 1 stream >= 0.8 x iperf3 at 1 stream. MULTILANE_* tuning
# variables in the environment reach multilane's ranks. Every run is bounded by `timeout`.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
streams=1,2,4,8
size=256MiB
runs=3
seconds=2
build=build-perf
keep=
build_first=1
usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  if [ "$1" = --no-build ]; then
    build_first=0
    shift
    continue
  fi
  [ $# -ge 2 ] || usage
  case $1 in
    --streams) streams=$2 ;;
    --size) size=$2 ;;
    --runs) runs=$2 ;;
    --seconds) seconds=$2 ;;
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
  cmake --build "$build" -j2 --target multilane >/dev/null
fi
multilane=$build/multilane
command -v iperf3 >/dev/null || { echo "compare-iperf3.sh: iperf3 is not installed" >&2; exit 1; }

server=
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  [ -n "$keep" ] || rm -rf "$out"
}
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  out=$keep
else
  out=$(mktemp -d "${TMPDIR:-/tmp}/compare-iperf3-XXXXXX")
fi
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port (the kernel's choice; the short race with other programs is harmless:
# iperf3 then fails to bind and the script stops).
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
iperf3 -s -B 127.0.0.1 -p "$port" >"$out/iperf3-server.log" 2>&1 &
server=$!
sleep 0.5
kill -0 "$server" 2>/dev/null || { cat "$out/iperf3-server.log" >&2; exit 1; }

limit=600
echo "# $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$runs runs"
run=1
while [ "$run" -le "$runs" ]; do
  echo "# run $run: multilane bench -n 2 --p2p --streams $streams --size $size --json" >&2
  timeout "$limit" "$multilane" bench -n 2 --p2p --streams "$streams" --size "$size" --json \
    >"$out/multilane-$run.json"
  for k in $(echo "$streams" | tr , ' '); do
    echo "# run $run: iperf3 -c 127.0.0.1 -p $port -P $k -t $seconds -J" >&2
    timeout "$limit" iperf3 -c 127.0.0.1 -p "$port" -P "$k" -t "$seconds" -J \
      >"$out/iperf3-$k-$run.json"
  done
  run=$((run + 1))
done

"$python" - "$out" "$streams" "$size" <<'EOF'
import glob, json, os, statistics, sys

out, streams = sys.argv[1], [int(k) for k in sys.argv[2].split(",")]

def spread(values):
    return max(values) / min(values)

ours = {}  # streams -> [bytes/s per run]
for path in sorted(glob.glob(os.path.join(out, "multilane-*.json"))):
    with open(path) as f:
        for row in json.load(f)["results"]:
            ours.setdefault(row["streams"], []).append(row["size"] / row["median_s"])
theirs = {}
for k in streams:
    for path in sorted(glob.glob(os.path.join(out, f"iperf3-{k}-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if "error" in doc:
            sys.exit(f"{path}: iperf3: {doc['error']}")
        theirs.setdefault(k, []).append(doc["end"]["sum_received"]["bits_per_second"] / 8)

gb = lambda v: f"{v / 1e9:.2f} GB/s"
single = statistics.median(theirs[streams[0]]) if streams else 0
runs = len(theirs[streams[0]])
print(f"\npoint to point, {sys.argv[3]} per multilane transfer: median over {runs} runs; "
      "spread = fastest / slowest run")
print("\n| streams | multilane | spread | iperf3 | spread | multilane / iperf3 | "
      f"multilane / iperf3 at {streams[0]} stream(s) |")
print("|---|---|---|---|---|---|---|")
for k in streams:
    a, b = statistics.median(ours[k]), statistics.median(theirs[k])
    print(f"| {k} | {gb(a)} | {spread(ours[k]):.2f} | {gb(b)} | {spread(theirs[k]):.2f} "
          f"| **{a / b:.2f}** | {a / single:.2f} |")
EOF
