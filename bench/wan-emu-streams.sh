#!/bin/sh
# bench/wan-emu-streams.sh — channels throughput between two sites of the emulated grid versus
# streams and round-trip time, next to iperf3 -P on the same path (docs/wan.md, table 1).
#
# For every one-way WAN latency it brings up the platform (default
# examples/platforms/wan-pair-1g.toml: 1 Gbit/s WAN, 256 KiB window per connection) under the
# emulation name wanstreams<pid>, measures the round trip (`multilane emu ping`), then RUNS
# times, for every stream count K: iperf3 -P K for SECONDS (plus 1 s of warm-up that is not
# counted) and bench/wan_throughput with K streams (one process per node: messages of SIZE
# for about SECONDS after one untimed message), once unpaced (as channels are by default: only
# as many streams take pieces as the path carries without stalls), once unpaced with all K
# streams taking pieces (--adapt off), once with the path's pacing
# tunable at PACE / K per stream (the streams together just below the WAN rate, so they do not
# overflow its queue), and once unpaced with every message cut into one equal share per stream
# up front (--shares equal: as MPWide does, and channels did before streams pulled their
# pieces), interleaved. Prints a markdown table: medians in Mbit/s and channels / iperf3
# (the median of each run's ratio to the iperf3 run before it) for every latency, and the raw runs.
#
# Environment: MULTILANE (default build/multilane), THROUGHPUT (default
# build/bench/wan_throughput), STREAMS (default "1 2 4 8 16 32 64"), LATENCIES (one way, default
# "0ms 1ms 5ms 10ms"), RUNS (default 3), SECONDS_PER_RUN (default 2), SIZE (default 32MiB),
# PACE (Mbit/s of all streams together, default 970), MTU (default 9000). Needs root and
# iperf3. Every command is bounded by `timeout`; the grid and the iperf3 server are removed on
# exit, also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
THROUGHPUT=${THROUGHPUT:-$here/../build/bench/wan_throughput}
platform=${1:-$here/../examples/platforms/wan-pair-1g.toml}
streams=${STREAMS:-1 2 4 8 16 32 64}
latencies=${LATENCIES:-0ms 1ms 5ms 10ms}
runs=${RUNS:-3}
seconds=${SECONDS_PER_RUN:-2}
size=${SIZE:-32MiB}
pace=${PACE:-970}
mtu=${MTU:-9000}
name=wanstreams$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/wan-emu-streams.XXXXXX)

cleanup() {
  [ -f "$work/iperf3.pid" ] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# in_node, grid_up_at, node_address, median_rtt, iperf3_server, iperf3_mbps, channels_mbps
. "$here/lib/emu_node.sh"

# channels STREAMS [OPTIONS...]: messages of $size for about $seconds.
channels() {
  channels_mbps $((seconds * 10 + 60)) "--seconds $seconds" "$@" --size "$size"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
for latency in $latencies; do
  grid_up_at "$latency" "$platform" "$work" --mtu "$mtu"
  server=$(node_address 1)
  rtt=$(median_rtt)
  iperf3_server 1 "$server" "$work/iperf3.pid"
  for run in $(seq "$runs"); do
    for k in $streams; do
      paced=$(awk "BEGIN {print $pace / $k}")Mbit/s
      echo "$latency $rtt $k $run $(iperf3_mbps "$k") $(channels "$k")" \
        "$(channels "$k" --adapt off)" \
        "$(channels "$k" --pacing "$paced") $(channels "$k" --shares equal)" \
        >>"$work/results"
    done
  done
  kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  rm -f "$work/iperf3.pid"
  "$MULTILANE" emu down --name "$name" >/dev/null
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$size" "$seconds" "$runs" "$pace" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print(f"\nmessages of {sys.argv[2]} for about {sys.argv[3]} s, iperf3 {sys.argv[3]} s; paced: "
      f"{sys.argv[5]} Mbit/s / streams per stream; medians of {sys.argv[4]} runs (Mbit/s), "
      "ratios: medians of each run's ratio to its iperf3 run\n")
latencies = list(dict.fromkeys(r[0] for r in rows))
rtt = {r[0]: r[1] for r in rows}
streams = list(dict.fromkeys(r[2] for r in rows))
print("| streams | " + " | ".join(f"RTT {rtt[l]}: iperf3 / channels / all K / paced / equal shares (ratios)" for l in latencies) + " |")
print("|---:|" + "---:|" * len(latencies))
for k in streams:
    cells = []
    for l in latencies:
        runs = [r for r in rows if r[0] == l and r[2] == k]
        iperf = statistics.median(float(r[4]) for r in runs)
        ours = statistics.median(float(r[5]) for r in runs)
        every = statistics.median(float(r[6]) for r in runs)
        paced = statistics.median(float(r[7]) for r in runs)
        equal = statistics.median(float(r[8]) for r in runs)
        # Each run's ratio to the iperf3 run just before it, then the median: iperf3 itself
        # varies from run to run, and a ratio of medians would pair different runs.
        ratios = [statistics.median(float(r[col]) / float(r[4]) for r in runs) for col in (5, 6, 7, 8)]
        cells.append(f"{iperf:.0f} / {ours:.0f} / {every:.0f} / {paced:.0f} / {equal:.0f} "
                     f"({', '.join(f'{x:.2f}' for x in ratios)})")
    print(f"| {k} | " + " | ".join(cells) + " |")
print("\nraw runs (one-way latency, RTT, streams, run, iperf3, channels, all K, paced, equal shares; Mbit/s):")
for r in rows:
    print("  " + " ".join(r))
PY
