#!/bin/sh
# bench/emu-ceiling.sh — how fast the emulator's WAN delay line forwards on this machine.
#
# Two nodes, 20 Gbit/s lanes, a WAN with no rate limit (so the delay line and the kernel are
# the only limits) and kernel-default TCP buffers; for each MTU and one-way latency, iperf3
# with 4 streams for SECONDS_PER_RUN seconds (plus 1 s of warm-up), and the delay line's CPU
# time over the run (from /proc, in percent of one core). Prints a markdown table.
#
# Environment: MULTILANE (default build/multilane), SECONDS_PER_RUN (default 4), MTUS
# (default "1500 9000 65000"), LATENCIES (default "0ms 10ms"). Needs root and iperf3.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
seconds=${SECONDS_PER_RUN:-4}
mtus=${MTUS:-1500 9000 65000}
latencies=${LATENCIES:-0ms 10ms}
name=ceiling$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/emu-ceiling.XXXXXX)
cleanup() {
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "| MTU | one-way latency | Gbit/s received | frames/s (data direction) | delay-line CPU |"
echo "|---:|---:|---:|---:|---:|"
for latency in $latencies; do
  cat >"$work/platform.toml" <<TOML
name = "ceiling"
[defaults]
lanes = 1
lane_bandwidth = "20Gbit/s"
lan_latency = "10us"
[[site]]
name = "a"
nodes = 1
[[site]]
name = "b"
nodes = 1
[[wan]]
between = ["a", "b"]
latency = "$latency"
TOML
  for mtu in $mtus; do
    "$MULTILANE" emu up "$work/platform.toml" --name "$name" --mtu "$mtu" >/dev/null
    pid=$(cat "/run/multilane/$name/wan0.pid")
    timeout 10 "$MULTILANE" emu exec --name "$name" 1 -- iperf3 -s -1 -D -B 198.18.1.1
    sleep 0.3
    before=$(cpu_ticks "$pid")
    start=$(date +%s.%N)
    timeout $((seconds + 30)) "$MULTILANE" emu exec --name "$name" 0 -- \
      iperf3 -c 198.18.1.1 -P 4 -t "$seconds" -O 1 -J >"$work/run.json"
    end=$(date +%s.%N)
    after=$(cpu_ticks "$pid")
    frames=$("$MULTILANE" emu status --name "$name" | sed -n 's/.*a -> b: frames in \([0-9]*\) .*/\1/p')
    $python - "$work/run.json" "$mtu" "$latency" "$frames" "$before" "$after" "$start" "$end" \
      "$(getconf CLK_TCK)" <<'PY'
import json, sys
run, mtu, latency, frames, before, after, start, end, hz = sys.argv[1:]
bps = json.load(open(run))["end"]["sum_received"]["bits_per_second"]
wall = float(end) - float(start)
cpu = (int(after) - int(before)) / int(hz) / wall
print(f"| {mtu} | {latency} | {bps / 1e9:.2f} | {int(frames) / wall:,.0f} | {100 * cpu:.0f}% |")
PY
    "$MULTILANE" emu down --name "$name" >/dev/null
  done
done
