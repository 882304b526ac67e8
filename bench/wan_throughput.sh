#!/usr/bin/env bash
# bench/wan_throughput.sh — channel throughput versus streams, next to iperf3 -P on the same path.
#
#   bench/wan_throughput.sh [BUILD_DIR] [STREAMS] [SECONDS]     (defaults: build 1,2,4,8,16,32,64 3)
#
# For every stream count K: iperf3 -P K for SECONDS against an iperf3 server on 127.0.0.1 (a
# private port), then build/wan_throughput --streams K (8 messages of 64 MiB), in the same run.
# Prints a Markdown table: K, iperf3 Gbit/s, channels Gbit/s, channels / iperf3. The iperf3
# server is stopped on exit, also on failure. Loopback only; for the emulated WAN see docs/wan.md.
set -euo pipefail
build=${1:-build}
streams=${2:-1,2,4,8,16,32,64}
seconds=${3:-3}
port=$((20000 + RANDOM % 20000))

iperf3 -s -B 127.0.0.1 -p "$port" -D --pidfile "/tmp/wan-iperf3-$port.pid" >/dev/null
trap 'kill "$(cat /tmp/wan-iperf3-$port.pid)" 2>/dev/null || true; rm -f /tmp/wan-iperf3-$port.pid' EXIT
sleep 0.3

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo
echo "| streams | iperf3 -P (Gbit/s) | channels (Gbit/s) | channels / iperf3 |"
echo "|---:|---:|---:|---:|"
for k in ${streams//,/ }; do
  iperf=$(iperf3 -c 127.0.0.1 -p "$port" -P "$k" -t "$seconds" -J |
          /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/1e9)')
  ours=$("$build/wan_throughput" --streams "$k" --size 64MiB --count 8 |
         sed -n 's/^streams [0-9]*: \([0-9.]*\) Gbit\/s.*/\1/p')
  ratio=$(/usr/bin/python3 -c "print(f'{$ours/$iperf:.2f}')")
  printf '| %s | %.2f | %.2f | %s |\n' "$k" "$iperf" "$ours" "$ratio"
done
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
