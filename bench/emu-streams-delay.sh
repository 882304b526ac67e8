#!/bin/sh
# bench/emu-streams-delay.sh [PLATFORM] — figure 6 of the broadcast paper on an emulated WAN.
#
# For every round-trip time (the platform's WAN latency replaced by 0, 1, 2.5, 5 and 10 ms one
# way) it brings the emulated grid up, measures the round trip (`multilane emu ping`), then
# the iperf3 throughput from node 0 to node 1 with 1, 2, 4, 8, 16 and 32 parallel streams
# (the platform's TCP window), and prints a markdown table: Mbit/s and percent of the WAN.
# PLATFORM defaults to examples/platforms/emu-wan-1g.toml (its first [[wan]] is used).
#
# Environment: MULTILANE (default build/multilane), SECONDS_PER_RUN (default 4, plus 1 s of
# warm-up that is not counted), STREAMS, LATENCIES, MTU (default 9000). Needs root and iperf3.
# Every run is bounded: iperf3 -t, and `timeout` around each command.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
platform=${1:-$here/../examples/platforms/emu-wan-1g.toml}
seconds=${SECONDS_PER_RUN:-4}
streams=${STREAMS:-1 2 4 8 16 32}
latencies=${LATENCIES:-0ms 1ms 2.5ms 5ms 10ms}
mtu=${MTU:-9000}
name=streams$$
python=/usr/bin/python3

work=$(mktemp -d /tmp/emu-streams.XXXXXX)
cleanup() {
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

wan_bps=$($python - "$platform" <<'PY'
import sys, tomllib
wan = tomllib.load(open(sys.argv[1], "rb"))["wan"][0]
value = wan["bandwidth"].replace(" ", "")
units = {"Gbit/s": 1e9, "Mbit/s": 1e6, "kbit/s": 1e3}
print(next(float(value[: -len(u)]) * f for u, f in units.items() if value.endswith(u)))
PY
)

rate() {  # rate STREAMS -> Mbit/s received
  server=$("$MULTILANE" emu hostfile --name "$name" | sed -n 2p | cut -d' ' -f1)
  timeout 10 "$MULTILANE" emu exec --name "$name" 1 -- iperf3 -s -1 -D -B "$server"
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    "$MULTILANE" emu exec --name "$name" 1 -- ss -Hltn "sport = :5201" | grep -q . && break
    sleep 0.1
  done
  timeout $((seconds + 30)) "$MULTILANE" emu exec --name "$name" 0 -- \
    iperf3 -c "$server" -P "$1" -t "$seconds" -O 1 -J >"$work/run.json"
  $python -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' "$work/run.json"
}

header="| streams |"
rule="|---:|"
for latency in $latencies; do
  sed "s/^latency = .*/latency = \"$latency\"/" "$platform" >"$work/platform.toml"
  "$MULTILANE" emu up "$work/platform.toml" --name "$name" --mtu "$mtu" >/dev/null
  rtt=$("$MULTILANE" emu ping --name "$name" 0 1 --count 20 | sed 's/.*median \([^,]*\),.*/\1/')
  header="$header RTT $rtt |"
  rule="$rule---:|"
  for p in $streams; do
    echo "$latency $p $(rate "$p")" >>"$work/results"
  done
  "$MULTILANE" emu down --name "$name" >/dev/null
done

echo "WAN $(awk "BEGIN {print $wan_bps / 1e6}") Mbit/s; cells: Mbit/s received (percent of the WAN)"
echo
echo "$header"
echo "$rule"
for p in $streams; do
  row="| $p |"
  for latency in $latencies; do
    mbps=$(awk -v l="$latency" -v p="$p" '$1 == l && $2 == p {print $3}' "$work/results")
    row="$row $mbps ($(awk "BEGIN {printf \"%d\", 100 * $mbps * 1e6 / $wan_bps}")%) |"
  done
  echo "$row"
done
