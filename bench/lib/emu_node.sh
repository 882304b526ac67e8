# bench/lib/emu_node.sh — an emulated grid for the WAN benchmarks: bringing it up at a latency,
# its addresses and round trip, an iperf3 server, the channels' throughput, and commands on its
# nodes bounded in time.
# Sourced by bench/wan-emu-*.sh and bench/mpwide-*emu.sh; they set $MULTILANE (the multilane
# binary) and $name (the emulation's name) before calling these.

# in_node SECONDS NODE COMMAND...: runs COMMAND in the node's namespace, killed after SECONDS.
in_node() {
  limit=$1 n=$2
  shift 2
  timeout "$limit" "$MULTILANE" emu exec --name "$name" "$n" -- "$@"
}

# in_node_background SECONDS NODE COMMAND... &: the same, replacing the background subshell, so
# that $! is the process to signal.
in_node_background() {
  limit=$1 n=$2
  shift 2
  exec timeout "$limit" "$MULTILANE" emu exec --name "$name" "$n" -- "$@"
}

# grid_up_at LATENCY PLATFORM WORK [EMU UP OPTIONS...]: brings up PLATFORM with every WAN latency
# set to LATENCY (one way) as the grid $name; the copy of the file goes to WORK/platform.toml.
grid_up_at() {
  sed "s/^latency = .*/latency = \"$1\"/" "$2" >"$3/platform.toml"
  platform_copy=$3/platform.toml
  shift 3
  "$MULTILANE" emu up "$platform_copy" --name "$name" "$@" >/dev/null
}

# node_address N: lane 0's address of node N (0-based).
node_address() {
  "$MULTILANE" emu hostfile --name "$name" | sed -n "$(($1 + 1))p" | cut -d' ' -f1
}

# median_rtt: the median of 20 round trips from node 0 to node 1, as `emu ping` prints it.
median_rtt() {
  "$MULTILANE" emu ping --name "$name" 0 1 --count 20 | sed 's/.*median \([^,]*\),.*/\1/' | tr -d ' '
}

# iperf3_server NODE ADDRESS PIDFILE: an iperf3 server (port 5301) as a daemon on the node,
# returning once it listens (at most 5 s).
iperf3_server() {
  in_node 10 "$1" iperf3 -s -D -B "$2" -p 5301 --pidfile "$3"
  for _ in $(seq 50); do
    in_node 5 "$1" ss -Hltn "sport = :5301" | grep -q . && return 0
    sleep 0.1
  done
  echo "iperf3 on node $1 does not listen after 5 s" >&2
  return 1
}

# iperf3_mbps K: Mbit/s that iperf3 -P K from node 0 moves to the server of iperf3_server on
# $server for $seconds (after 1 s of warm-up that is not counted), at the receiver; its JSON
# goes to $work/iperf.json.
iperf3_mbps() {
  in_node $((seconds + 30)) 0 iperf3 -c "$server" -p 5301 -P "$1" -t "$seconds" -O 1 -J \
    >"$work/iperf.json"
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6)' \
    "$work/iperf.json"
}

# channels_mbps TIMEOUT SENDER_OPTIONS STREAMS [OPTIONS...]: the Mbit/s that $THROUGHPUT (the
# channels' bench/wan_throughput) moves from node 0 to a receiver on node 1 at $server:7000 over
# STREAMS streams, as the sender reports it. OPTIONS go to both ends (--size, --pacing ...),
# SENDER_OPTIONS (split into words) to the sender only (--count N or --seconds S); each end is
# killed after TIMEOUT seconds. The ends' output goes to $work; a failure prints it and exits.
channels_mbps() {
  # No `local` in POSIX sh: prefixed names keep the callers' variables (e.g. $streams).
  channels_timeout=$1 channels_sender=$2 channels_streams=$3
  shift 3
  in_node_background "$channels_timeout" 1 "$THROUGHPUT" --listen "$server:7000" --streams "$channels_streams" \
    "$@" >"$work/receiver.out" 2>&1 &
  receiver=$!
  for _ in $(seq 100); do
    grep -q listening "$work/receiver.out" 2>/dev/null && break
    sleep 0.05
  done
  # shellcheck disable=SC2086 # the sender's options are words
  in_node "$channels_timeout" 0 "$THROUGHPUT" --connect "$server:7000" --streams "$channels_streams" "$@" \
    $channels_sender >"$work/sender.out" 2>&1 || true
  wait "$receiver" || true
  gbps=$(sed -n 's/^streams [0-9]*: \([0-9.]*\) Gbit\/s.*/\1/p' "$work/sender.out")
  if [ -z "$gbps" ]; then
    echo "wan_throughput failed with $channels_streams streams:" >&2
    cat "$work/sender.out" "$work/receiver.out" >&2
    exit 1
  fi
  awk "BEGIN {print $gbps * 1000}"
}
