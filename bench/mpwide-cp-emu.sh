#!/bin/sh
# bench/mpwide-cp-emu.sh — one file across the emulated 20 ms WAN: `multilane cp` against
# MPWide's MPWFileCopy (mpw-cp), scp and rsync over ssh (docs/wan.md, file copy table).
#
# Builds MPWFileCopy from MPWIDE_SRC (a checkout of djgroen/MPWide, built in a scratch
# directory with its own Makefile, nothing of it kept), brings up
# examples/platforms/wan-pair-1g.toml with a one-way latency of LATENCY (default 10ms: a 20 ms
# round trip, 256 KiB window per connection) as emulation mpwcp<pid>, starts `multilane serve`
# and an sshd (a key made for the run, port 2222) on node 1 and, RUNS times (default 3),
# copies a SIZE file (default 1GiB, random bytes) from node 0 to node 1 with each tool in turn:
# `multilane cp --streams K`, MPWFileCopy with K streams (server on node 1 first, then the
# client), `scp` and `rsync -e ssh` (K from STREAMS, default 16). Each command is timed whole
# (setup, transfer, and for multilane cp its end-to-end hash check), and each copy is checked
# byte for byte (cmp). Prints a markdown table of medians.
#
# Environment: MPWIDE_SRC (required), MULTILANE (default build/multilane), SIZE, STREAMS, RUNS,
# LATENCY. Needs root, OpenSSH's server and rsync (Debian packages openssh-server, rsync).
# Every command is bounded by `timeout`; the grid, the servers and the files are removed on
# exit, also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
: "${MPWIDE_SRC:?set MPWIDE_SRC to a checkout of djgroen/MPWide}"
MPWIDE_SRC=$(cd "$MPWIDE_SRC" && pwd)
MULTILANE=$(realpath "${MULTILANE:-$here/../build/multilane}")
platform=$here/../examples/platforms/wan-pair-1g.toml
size=${SIZE:-1GiB}
k=${STREAMS:-16}
runs=${RUNS:-3}
latency=${LATENCY:-10ms}
name=mpwcp$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/mpwide-cp-emu.XXXXXX)
export MULTILANE_SECRET="mpwide-cp-emu benchmark secret" MULTILANE_JOB_ID=40

for tool in /usr/sbin/sshd /usr/bin/rsync /usr/bin/scp; do
  [ -x "$tool" ] || { echo "mpwide-cp-emu: $tool is missing (apt-get install openssh-server rsync)" >&2; exit 1; }
done

cleanup() {
  for pid in ${serve_pid:-} ${sshd_pid:-} ${mpw_server_pid:-}; do kill "$pid" 2>/dev/null || true; done
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$here/lib/emu_node.sh"  # in_node, grid_up_at, node_address, median_rtt, iperf3_server

cp -r "$MPWIDE_SRC" "$work/mpwide"
make -C "$work/mpwide" MPWFileCopy CXXFLAGS="-O3 -fPIC -w" >"$work/mpwide-make.log" 2>&1 ||
  { tail -n 20 "$work/mpwide-make.log" >&2; exit 1; }
cd "$work"  # MPWide writes bandwidth_monitor.txt into the working directory

bytes=$($python -c "
import re, sys
n, u = re.fullmatch(r'([0-9]+)([KMG]i?B|B)?', sys.argv[1]).groups()
print(int(n) * {None: 1, 'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30}[u])" "$size")
mkdir -p "$work/served" "$work/mpw" "$work/ssh"
head -c "$bytes" /dev/urandom >"$work/source.bin"

# sshd for scp and rsync: keys made for this run, root by key only, on node 1's address.
ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/ssh/user_key"
cp "$work/ssh/user_key.pub" "$work/ssh/authorized_keys"
mkdir -p /run/sshd

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
grid_up_at "$latency" "$platform" "$work"
client=$(node_address 0)
server=$(node_address 1)
rtt=$(median_rtt)

cat >"$work/ssh/sshd_config" <<CONF
Port 2222
ListenAddress $server
HostKey $work/ssh/host_key
AuthorizedKeysFile $work/ssh/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $work/ssh/sshd.pid
Subsystem sftp internal-sftp
CONF
in_node_background 7200 1 /usr/sbin/sshd -D -e -f "$work/ssh/sshd_config" >"$work/sshd.out" 2>&1 &
sshd_pid=$!
in_node_background 7200 1 "$MULTILANE" serve "$work/served" --listen "$server:7447" \
  >"$work/serve.out" 2>&1 &
serve_pid=$!
ssh_options="-i $work/ssh/user_key -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
for _ in $(seq 100); do
  in_node 5 1 ss -Hltn "sport = :2222" | grep -q . && in_node 5 1 ss -Hltn "sport = :7447" | grep -q . && break
  sleep 0.1
done

# timed NAME COPY_FILE COMMAND...: runs COMMAND on node 0, checks COPY_FILE against the source.
timed() {
  tool=$1 copy=$2
  shift 2
  rm -f "$copy"
  start=$(date +%s.%N)
  "$@" >"$work/$tool.out" 2>&1 || { echo "$tool failed:" >&2; cat "$work/$tool.out" >&2; exit 1; }
  finish=$(date +%s.%N)
  cmp -s "$work/source.bin" "$copy" || { echo "the copy by $tool differs from the source" >&2; exit 1; }
  echo "$tool $run $(awk "BEGIN {print $finish - $start}")" >>"$work/results"
  rm -f "$copy"
}

mpwfilecopy() {  # the server first: it finds nobody at the client and listens
  in_node_background 1800 1 "$work/mpwide/MPWFileCopy" "$client" 0 "$work/mpw/" "$k" \
    >"$work/mpw-server.out" 2>&1 &
  mpw_server_pid=$!
  sleep 1
  # Both exit with status 1 when done (MPWide's programs do); the copy's bytes decide.
  in_node 1800 0 "$work/mpwide/MPWFileCopy" "$server" 1 "$work/source.bin" "$k" || true
  wait "$mpw_server_pid" || true
  mpw_server_pid=
}

for run in $(seq "$runs"); do
  timed "multilane-cp" "$work/served/copy.bin" in_node 1800 0 "$MULTILANE" cp "$work/source.bin" \
    "$server:copy.bin" --streams "$k" --progress none --timeout 60
  rm -f "$work/mpw/source.bin"
  start=$(date +%s.%N)
  mpwfilecopy >"$work/MPWFileCopy.out" 2>&1
  finish=$(date +%s.%N)
  cmp -s "$work/source.bin" "$work/mpw/source.bin" ||
    { echo "MPWFileCopy's copy differs from the source:" >&2; tail -n 5 "$work/MPWFileCopy.out" "$work/mpw-server.out" >&2; exit 1; }
  echo "MPWFileCopy $run $(awk "BEGIN {print $finish - $start}")" >>"$work/results"
  rm -f "$work/mpw/source.bin"
  timed scp "$work/scp.bin" in_node 1800 0 scp -q -P 2222 $ssh_options "$work/source.bin" \
    "root@$server:$work/scp.bin"
  timed rsync "$work/rsync.bin" in_node 1800 0 rsync -e "ssh -p 2222 $ssh_options" \
    "$work/source.bin" "root@$server:$work/rsync.bin"
  tail -n 4 "$work/results" >&2
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$size" "$bytes" "$rtt" "$runs" "$k" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
size, total, rtt, runs, k = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
print(f"\n{size} across a 1 Gbit/s WAN, RTT {rtt}, 256 KiB window per connection; {k} streams for "
      f"multilane cp and MPWFileCopy; medians of {runs} runs, whole command timed\n")
times = {t: statistics.median(float(r[2]) for r in rows if r[0] == t) for t in dict.fromkeys(r[0] for r in rows)}
ours = times["multilane-cp"]
print("| tool | seconds | Mbit/s | multilane cp is ... x faster |")
print("|---|---:|---:|---:|")
for tool, t in times.items():
    print(f"| {tool} | {t:.1f} | {total * 8 / t / 1e6:.0f} | {t / ours:.2f} |")
print("\nraw runs (tool, run, seconds):")
for r in rows:
    print("  " + " ".join(r))
PY
