#!/bin/sh
# bench/wan-emu-cp.sh — `multilane cp` of one file across the emulated WAN (docs/wan.md, table 4).
#
# Brings up examples/platforms/wan-pair-1g.toml with a one-way latency of LATENCY (default 10ms:
# a 20 ms round trip, where one connection's 256 KiB window caps it near 105 Mbit/s) as
# emulation wancp<pid>, runs `multilane serve` on node 1 (into a scratch directory) and, RUNS
# times (default 3) for every stream count in STREAMS (default "1 8 16"), copies a SIZE file
# (default 1GiB, random bytes) from node 0 with `multilane cp --force --progress none`, timing the
# whole command (hashing, connecting, transfer and end-to-end verification). Each copy is checked
# byte for byte (cmp) against the source. Right after each copy, the channels alone move the
# same bytes over as many streams on the same path (bench/wan_throughput: messages of 4 MiB,
# cp's block size, the sender timed to the receiver's acknowledgement of the last). Prints a
# markdown table of medians: cp's time and rate, the channels' rate and cp / channels.
#
# Environment: MULTILANE (default build/multilane), THROUGHPUT (default
# build/bench/wan_throughput), SIZE, STREAMS, RUNS, LATENCY. Needs root.
# Every command is bounded by `timeout`; the grid, the server and the files are removed on exit,
# also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
THROUGHPUT=${THROUGHPUT:-$here/../build/bench/wan_throughput}
platform=$here/../examples/platforms/wan-pair-1g.toml
size=${SIZE:-1GiB}
streams=${STREAMS:-1 8 16}
runs=${RUNS:-3}
latency=${LATENCY:-10ms}
name=wancp$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/wan-emu-cp.XXXXXX)
export MULTILANE_SECRET="wan-emu-cp benchmark secret" MULTILANE_JOB_ID=9

cleanup() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null || true
  [ -n "${receiver:-}" ] && kill "$receiver" 2>/dev/null || true
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$here/lib/emu_node.sh"  # in_node, grid_up_at, node_address, median_rtt, iperf3_server, channels_mbps

bytes=$($python -c "
import re, sys
n, u = re.fullmatch(r'([0-9]+)([KMG]i?B|B)?', sys.argv[1]).groups()
print(int(n) * {None: 1, 'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}[u])" "$size")
mkdir -p "$work/served"
head -c "$bytes" /dev/urandom >"$work/source.bin"

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
grid_up_at "$latency" "$platform" "$work"
server=$(node_address 1)
rtt=$(median_rtt)
in_node_background 3600 1 "$MULTILANE" serve "$work/served" --listen "$server:7447" \
  >"$work/serve.out" 2>&1 &
server_pid=$!
for _ in $(seq 200); do
  grep -q "listening\|on $server" "$work/serve.out" && break
  sleep 0.05
done

for run in $(seq "$runs"); do
  for k in $streams; do
    start=$(date +%s.%N)
    in_node 900 0 "$MULTILANE" cp "$work/source.bin" "$server:copy.bin" --streams "$k" --force \
      --progress none --timeout 60 >"$work/cp.out" 2>&1 || {
      echo "multilane cp with $k streams failed:" >&2
      cat "$work/cp.out" "$work/serve.out" >&2
      exit 1
    }
    finish=$(date +%s.%N)
    cmp -s "$work/source.bin" "$work/served/copy.bin" || {
      echo "the copy with $k streams differs from the source" >&2
      exit 1
    }
    channels=$(channels_mbps 600 "--count $((bytes / (4 << 20)))" "$k" --size 4MiB)
    echo "$k $run $(awk "BEGIN {print $finish - $start}") $channels" >>"$work/results"
  done
done
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=
"$MULTILANE" emu down --name "$name" >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$size" "$bytes" "$rtt" "$runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
size, total, rtt, runs = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
print(f"\nmultilane cp of {size} across a 1 Gbit/s WAN, RTT {rtt}, 256 KiB window per connection; "
      f"medians of {runs} runs, whole command timed; channels: the same bytes in 4 MiB messages\n")
print("| streams | cp seconds | cp Mbit/s | x one stream | channels Mbit/s | cp / channels |")
print("|---:|---:|---:|---:|---:|---:|")
base = None
for k in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == k]
    t = statistics.median(float(r[2]) for r in mine)
    rate = total * 8 / t / 1e6
    channels = statistics.median(float(r[3]) for r in mine)
    ratio = statistics.median(total * 8 / float(r[2]) / 1e6 / float(r[3]) for r in mine)
    base = base or rate
    print(f"| {k} | {t:.1f} | {rate:.0f} | {rate / base:.2f} | {channels:.0f} | {ratio:.2f} |")
print("\nraw runs (streams, run, cp seconds, channels Mbit/s):")
for r in rows:
    print("  " + " ".join(r))
PY
