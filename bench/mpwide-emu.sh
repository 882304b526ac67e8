#!/bin/sh
# bench/mpwide-emu.sh — MPWide's own MPWTest, unchanged, linked once with MPWide and once with
# multilane, on the emulated 20 ms grid, next to iperf3 -P K (docs/wan.md, MPWide table).
#
# Builds MPWide (MPWIDE_SRC, a checkout of djgroen/MPWide; built in a scratch directory with its
# own Makefile, nothing of it kept) and the same program against multilane's MPWide.h
# (bench/mpwide_programs.cmake), brings up examples/platforms/wan-pair-1g.toml with a one-way
# latency of LATENCY (default 10ms: a 20 ms round trip, 256 KiB window per connection) as
# emulation mpwemu<pid>, and RUNS times (default 3) for every stream count K in STREAMS
# (default "1 8 32"): iperf3 -P K for IPERF_SECONDS (default 5) from node 0 to node 1, then MPWTest
# with K streams and messages of SIZE_KB KiB (default 32768: 32 MiB) for each library, server
# on node 1, client on node 0; then again through a forwarder on node 0 (the client connects
# to it on 127.0.0.1): MPWide's through its Forwarder program (source 0 16256, destination the
# server 16256, K streams), multilane's through `multilane relay --forward`. MPWTest times nothing itself: each of its iterations sends a
# message, receives one and sleeps 1 s before printing "End of iteration i."; the time between
# two such lines of the client, less the second, is the exchange, and 2 x SIZE / that time its
# rate. Iterations 1..ITERATIONS (default 3) count (0 warms up); then both ends are stopped.
# Prints a markdown table of medians.
#
# Environment: MPWIDE_SRC (required), MULTILANE (default build/multilane), BUILD (default
# build), STREAMS, RUNS, IPERF_SECONDS, SIZE_KB, ITERATIONS, LATENCY. Needs root and iperf3. Every
# command is bounded by `timeout`; the grid, servers and scratch files are removed on exit,
# also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
: "${MPWIDE_SRC:?set MPWIDE_SRC to a checkout of djgroen/MPWide}"
MPWIDE_SRC=$(cd "$MPWIDE_SRC" && pwd)
build=${BUILD:-$here/../build}
MULTILANE=$(realpath "${MULTILANE:-$build/multilane}")
platform=$here/../examples/platforms/wan-pair-1g.toml
streams=${STREAMS:-1 8 32}
runs=${RUNS:-3}
seconds=${IPERF_SECONDS:-5}
size_kb=${SIZE_KB:-32768}
iterations=${ITERATIONS:-3}
latency=${LATENCY:-10ms}
name=mpwemu$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/mpwide-emu.XXXXXX)
export MULTILANE_SECRET="mpwide-emu benchmark secret" MULTILANE_JOB_ID=40

cleanup() {
  [ -f "$work/iperf3.pid" ] && kill "$(cat "$work/iperf3.pid")" 2>/dev/null || true
  for pid in ${server_pid:-} ${via_pid:-}; do kill "$pid" 2>/dev/null || true; done
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$here/lib/emu_node.sh"  # in_node, grid_up_at, node_address, median_rtt, iperf3_server, iperf3_mbps

# MPWide as its Makefile builds it, and MPWTest against our header.
cp -r "$MPWIDE_SRC" "$work/mpwide"
make -C "$work/mpwide" MPWTest MPWForwarder CXXFLAGS="-O3 -fPIC -w" >"$work/mpwide-make.log" 2>&1 ||
  { tail -n 20 "$work/mpwide-make.log" >&2; exit 1; }
cmake -S "$here/.." -B "$build" -DMULTILANE_MPWIDE_SRC="$MPWIDE_SRC" >/dev/null
cmake --build "$build" -j2 --target MPWTest >"$work/build.log" 2>&1 ||
  { tail -n 20 "$work/build.log" >&2; exit 1; }
mpwide_test=$work/mpwide/MPWTest
mpwide_forwarder=$work/mpwide/MPWForwarder
multilane_test=$build/mpwide-programs/MPWTest

# Runs the client (node 0) until ITERATIONS + 1 iterations ended; prints the median rate of
# iterations 1..ITERATIONS in Mbit/s.
client_mbps() {  # client_mbps PROGRAM K PEER
  in_node $((iterations * 120 + 60)) 0 $python - "$iterations" "$size_kb" "$1" 0 "$3" "$2" \
    "$size_kb" <<'PY'
import signal, statistics, subprocess, sys, time
iterations, size_kb, command = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
ends, log = [], []
for line in child.stdout:
    log.append(line)
    if line.startswith("End of iteration"):
        ends.append(time.monotonic())
        if len(ends) == iterations + 1:
            break
child.send_signal(signal.SIGKILL)
child.wait()
if len(ends) < iterations + 1:
    sys.exit("client ended early:\n" + "".join(log[-20:]))
bits = 2 * size_kb * 1024 * 8
rates = [bits / (b - a - 1.0) / 1e6 for a, b in zip(ends, ends[1:])]
print(f"{statistics.median(rates):.0f}")
PY
}

# mpwtest_mbps PROGRAM K [forwarder|relay]: the server on node 1 first (it finds nobody and
# listens), then the forwarder on node 0 if any, then the client.
mpwtest_mbps() {
  in_node_background $((iterations * 120 + 60)) 1 "$1" 1 "$client" "$2" "$size_kb" \
    >"$work/server.out" 2>&1 &
  server_pid=$!
  sleep 1
  peer=$server
  case "${3:-}" in
    forwarder)
      printf '0\n16256\n%s\n16256\n%s\ndone\n' "$server" "$2" |
        in_node_background $((iterations * 120 + 60)) 0 "$mpwide_forwarder" \
          >"$work/via.out" 2>&1 &
      via_pid=$!
      peer=127.0.0.1
      sleep 2 ;;
    relay)
      in_node_background $((iterations * 120 + 60)) 0 "$MULTILANE" relay \
        --listen 0.0.0.0:16256 --forward "$server:16256" >"$work/via.out" 2>&1 &
      via_pid=$!
      peer=127.0.0.1
      sleep 1 ;;
  esac
  rate=$(client_mbps "$1" "$2" "$peer") ||
    { cat "$work/server.out" "$work/via.out" >&2 2>/dev/null; exit 1; }
  for pid in "$server_pid" ${via_pid:-}; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  server_pid= via_pid=
  sleep 1  # the ports are free again
  echo "$rate"
}


build=$(cd "$build" && pwd)
cd "$work"  # MPWide writes bandwidth_monitor.txt into the working directory
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
grid_up_at "$latency" "$platform" "$work"
client=$(node_address 0)
server=$(node_address 1)
rtt=$(median_rtt)
iperf3_server 1 "$server" "$work/iperf3.pid"
for run in $(seq "$runs"); do
  for k in $streams; do
    echo "$k $run $(iperf3_mbps "$k") $(mpwtest_mbps "$mpwide_test" "$k")" \
      "$(mpwtest_mbps "$multilane_test" "$k") $(mpwtest_mbps "$mpwide_test" "$k" forwarder)" \
      "$(mpwtest_mbps "$multilane_test" "$k" relay)" >>"$work/results"
    tail -n 1 "$work/results" >&2
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$size_kb" "$rtt" "$runs" "$iterations" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print(f"\nMPWTest (unchanged), messages of {int(sys.argv[2]) // 1024} MiB each way, RTT {sys.argv[3]}; "
      f"medians of {sys.argv[4]} runs of {sys.argv[5]} exchanges each (Mbit/s)\n")
print("| streams | iperf3 -P K | MPWide | multilane | multilane / MPWide | multilane / iperf3 |"
      " MPWide via its Forwarder | multilane via `multilane relay` | relay / direct | relay / Forwarder |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for k in dict.fromkeys(r[0] for r in rows):
    runs = [r for r in rows if r[0] == k]
    iperf, mpwide, ours, forwarder, relay = (
        statistics.median(float(r[i]) for r in runs) for i in (2, 3, 4, 5, 6))
    print(f"| {k} | {iperf:.0f} | {mpwide:.0f} | {ours:.0f} | {ours / mpwide:.2f} | {ours / iperf:.2f} "
          f"| {forwarder:.0f} | {relay:.0f} | {relay / ours:.2f} | {relay / forwarder:.2f} |")
print("\nraw runs (streams, run, iperf3, MPWide, multilane, MPWide via Forwarder, multilane via "
      "relay; Mbit/s):")
for r in rows:
    print("  " + " ".join(r))
PY
