#!/bin/sh
# bench/emu-p2p-iperf3.sh — a point-to-point transfer through the Communicator across the emulated
# WAN, next to iperf3 -P K on the same path (docs/performance.md, "Across the WAN").
#
# Brings up examples/platforms/wan-pair-1g.toml (two sites of one node, 1 Gbit/s WAN, 256 KiB
# window per connection) with a one-way latency of LATENCY (default 10ms: a 20 ms round trip)
# as emulation p2p<pid>. Then RUNS times (default 3), for every stream count K in STREAMS
# (default "1 4 16"), interleaved: iperf3 -P K from node 0 to node 1 for SECONDS (default 4,
# plus 1 s of warm-up that is not counted), and `multilane bench --emu --p2p --streams K --size
# SIZE` (default 256MiB): rank 0 on node 0 sends SIZE to rank 1 on node 1 over K WAN streams,
# the median of 5 transfers. Prints a markdown table of medians in Mbit/s and multilane / iperf3
# (the median of each run's ratio to the iperf3 run before it), and the raw runs.
#
# Environment: MULTILANE (default build/multilane), SIZE, STREAMS, RUNS, SECONDS, LATENCY.
# Needs root and iperf3. Every command is bounded by `timeout`; the grid and the iperf3 server
# are removed on exit, also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
platform=$here/../examples/platforms/wan-pair-1g.toml
size=${SIZE:-256MiB}
streams=${STREAMS:-1 4 16}
runs=${RUNS:-3}
seconds=${SECONDS:-4}
latency=${LATENCY:-10ms}
name=p2p$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/emu-p2p.XXXXXX)

cleanup() {
  [ -f "$work/iperf3.pid" ] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$here/lib/emu_node.sh"  # in_node, grid_up_at, node_address, median_rtt, iperf3_server, iperf3_mbps


multilane_mbits() {
  timeout 600 "$MULTILANE" bench --emu "$name" -n 2 --p2p --streams "$1" --size "$size" --json \
    >"$work/p2p.json"
  $python -c 'import json,sys; r = json.load(open(sys.argv[1]))["results"][0]; print(r["size"] * 8 / r["median_s"] / 1e6)' \
    "$work/p2p.json"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
grid_up_at "$latency" "$platform" "$work"
server=$(node_address 1)
rtt=$(median_rtt)
iperf3_server 1 "$server" "$work/iperf3.pid"

for run in $(seq "$runs"); do
  for k in $streams; do
    echo "$k $run $(iperf3_mbps "$k") $(multilane_mbits "$k")" >>"$work/results"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$size" "$rtt" "$runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
size, rtt, runs = sys.argv[2], sys.argv[3], sys.argv[4]
print(f"\nCommunicator point-to-point ({size} per transfer) against iperf3 -P K across a 1 Gbit/s "
      f"WAN, RTT {rtt}, 256 KiB window per connection; medians of {runs} runs\n")
print("| K streams | iperf3 Mbit/s | multilane Mbit/s | multilane / iperf3 |")
print("|---:|---:|---:|---:|")
for k in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == k]
    iperf = statistics.median(float(r[2]) for r in mine)
    ours = statistics.median(float(r[3]) for r in mine)
    ratio = statistics.median(float(r[3]) / float(r[2]) for r in mine)
    print(f"| {k} | {iperf:.0f} | {ours:.0f} | {ratio:.2f} |")
print("\nraw runs (K, run, iperf3 Mbit/s, multilane Mbit/s):")
for r in rows:
    print("  " + " ".join(r))
PY
