#!/bin/sh
# bench/wan-emu-routers.sh — aggregate routers on the emulated grid (docs/wan.md, tables 2, 3).
#
# Brings up examples/platforms/wan-routers-2x8.toml (two sites of 8 nodes, a 1 Gbit/s WAN, 10 ms
# round trip) as emulation wanrouters<pid>; router i of a site runs on node i of that site, its
# links to the other site paced to NIC (default 100 Mbit/s, a tenth of the WAN: the routers'
# slow external NICs).
#
# Table 2, throughput versus R: for R in ROUTERS, R routers per site; rank 0 of site 0 (node 0)
# sends COUNT messages of SIZE to rank 0 of site 1 (on that site's node 0), which checks every
# byte (`multilane router --rank`); aggregate mode (striped over the R routers) for every R, and
# at the largest R also static (one router) and direct (all-to-all TCP, the rank's link paced to
# NIC). The sender's throughput (time from its first send to the acknowledgement of the last).
#
# Table 3, an uneven pattern at the largest R: rank j of site 0 sends to rank j of site 1 the
# megabytes the static routers of the paper's Table 3 carried (phases 1 to 3), scaled by SCALE
# (default 1/4: MB x 256 KiB), all 8 pairs at once; the time from starting the senders until the
# last one finished (process start-up included, the same for every mode), in the aggregate,
# static (rank j through router j) and direct modes.
#
# RUNS (default 3) runs each; medians. Environment: MULTILANE (default build/multilane), ROUTERS
# (default "1 2 4 8"), NIC (default 100Mbit/s), SIZE (default 32MiB), COUNT (default 2), RUNS,
# SCALE_KIB (KiB per paper megabyte, default 256). Needs root. Every process is bounded by
# `timeout`; the grid is taken down on exit, also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}
platform=$here/../examples/platforms/wan-routers-2x8.toml
routers_list=${ROUTERS:-1 2 4 8}
nic=${NIC:-100Mbit/s}
size=${SIZE:-32MiB}
count=${COUNT:-2}
runs=${RUNS:-3}
scale_kib=${SCALE_KIB:-256}
name=wanrouters$$
python=/usr/bin/python3
work=$(mktemp -d /tmp/wan-emu-routers.XXXXXX)
export MULTILANE_SECRET="wan-emu-routers benchmark secret" MULTILANE_JOB_ID=7

cleanup() {
  for pid in $(cat "$work/pids" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  "$MULTILANE" emu down --name "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

. "$here/lib/emu_node.sh"  # in_node, grid_up_at, node_address, median_rtt, iperf3_server
address() { sed -n "$(($1 + 1))p" "$work/hosts" | cut -d' ' -f1; }

# waits until FILE holds PATTERN (at most 10 s)
wait_for() {
  for _ in $(seq 200); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for \"$2\" in $1:" >&2
  cat "$1" >&2
  exit 1
}

# Every set of routers and every direct-mode transfer listens on ports of its own: a port just
# closed may linger in TIME_WAIT.
router_port=7100
rank_port=7300

start_routers() {  # start_routers R
  router_port=$((router_port + 1))
  : >"$work/pids"
  for site in 0 1; do
    other=$((1 - site))
    for i in $(seq 0 $(($1 - 1))); do
      in_node_background 600 $((site * 8 + i)) "$MULTILANE" router --site "$site" --index "$i" \
        --listen "$(address $((site * 8 + i))):$router_port" \
        --peer "$other=$(address $((other * 8 + i))):$router_port" --wan-rate "$nic" --timeout 30 \
        >"$work/router-$site-$i.out" 2>&1 &
      echo $! >>"$work/pids"
    done
  done
  for site in 0 1; do
    for i in $(seq 0 $(($1 - 1))); do wait_for "$work/router-$site-$i.out" listening; done
  done
}

stop_routers() {
  for pid in $(cat "$work/pids"); do kill "$pid" 2>/dev/null || true; done
  for pid in $(cat "$work/pids"); do wait "$pid" 2>/dev/null || true; done
  : >"$work/pids"
}

router_list() {  # router_list SITE R
  list=""
  for i in $(seq 0 $(($2 - 1))); do list="$list${list:+,}$(address $(($1 * 8 + i))):$router_port"; done
  echo "$list"
}

# transfer MODE R PAIRS SIZES...: rank j of site 0 sends SIZE_j to rank j of site 1 for every
# pair j with a non-zero size; prints the wall seconds until every sender finished and the
# senders' own rates (Mbit/s, space separated).
transfer() {
  mode=$1 r=$2
  shift 2
  list="$*"
  receivers="" senders=""
  j=0
  for s in $list; do
    if [ "$s" != 0 ]; then
      common="--mode $mode --size $s --count $count --timeout 60"
      # direct: the pair's own TCP connection (a rank that finished closes its links, which
      # would end ranks still linked to it)
      directory="0:$j=$(address "$j"):$rank_port,1:$j=$(address $((8 + j))):$rank_port"
      if [ "$mode" = direct ]; then
        # shellcheck disable=SC2086
        in_node_background 300 $((8 + j)) "$MULTILANE" router --rank "$j" --site 1 $common \
          --listen "$(address $((8 + j))):$rank_port" --directory "$directory" --receive-from "0:$j" \
          >"$work/receiver-$j.out" 2>&1 &
      else
        # shellcheck disable=SC2086
        in_node_background 300 $((8 + j)) "$MULTILANE" router --rank "$j" --site 1 $common \
          --routers "$(router_list 1 "$r")" --receive-from "0:$j" >"$work/receiver-$j.out" 2>&1 &
      fi
      receivers="$receivers $!"
    fi
    j=$((j + 1))
  done
  if [ "$mode" = direct ]; then
    j=0
    for s in $list; do
      [ "$s" != 0 ] && wait_for "$work/receiver-$j.out" listening
      j=$((j + 1))
    done
  fi
  start=$(date +%s.%N)
  j=0
  for s in $list; do
    if [ "$s" != 0 ]; then
      common="--mode $mode --size $s --count $count --timeout 60"
      directory="0:$j=$(address "$j"):$rank_port,1:$j=$(address $((8 + j))):$rank_port"
      if [ "$mode" = direct ]; then
        # shellcheck disable=SC2086
        in_node_background 300 "$j" "$MULTILANE" router --rank "$j" --site 0 $common --nic-rate "$nic" \
          --listen "$(address "$j"):$rank_port" --directory "$directory" --send-to "1:$j" \
          >"$work/sender-$j.out" 2>&1 &
      else
        # shellcheck disable=SC2086
        in_node_background 300 "$j" "$MULTILANE" router --rank "$j" --site 0 $common \
          --routers "$(router_list 0 "$r")" --send-to "1:$j" >"$work/sender-$j.out" 2>&1 &
      fi
      senders="$senders $!"
    fi
    j=$((j + 1))
  done
  failed=0
  for pid in $senders; do wait "$pid" || failed=1; done
  finish=$(date +%s.%N)
  for pid in $receivers; do wait "$pid" || failed=1; done
  if [ "$failed" = 1 ] || grep -L "every byte as sent" "$work"/receiver-*.out | grep -q .; then
    echo "a transfer failed ($mode, R $r, sizes $list):" >&2
    cat "$work"/sender-*.out "$work"/receiver-*.out >&2
    exit 1
  fi
  rates=$(sed -n 's/.* s: \([0-9.]*\) \([kMG]\)bit\/s.*/\1 \2/p' "$work"/sender-*.out |
    awk '{printf "%s%.1f", (NR > 1 ? "," : ""), ($2 == "G" ? $1 * 1000 : ($2 == "k" ? $1 / 1000 : $1))}')
  rm -f "$work"/sender-*.out "$work"/receiver-*.out
  echo "$(awk "BEGIN {print $finish - $start}") $rates"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
"$MULTILANE" emu up "$platform" --name "$name" >/dev/null
"$MULTILANE" emu hostfile --name "$name" >"$work/hosts"
largest=0
for r in $routers_list; do largest=$r; done
for r in $routers_list; do
  start_routers "$r"
  modes=aggregate
  [ "$r" = "$largest" ] && modes="aggregate static direct"
  for run in $(seq "$runs"); do
    for mode in $modes; do
      rank_port=$((rank_port + 1))
      out=$(transfer "$mode" "$r" "$size") || exit 1
      echo "vsR $r $mode $run $out" >>"$work/results"
    done
  done
  if [ "$r" = "$largest" ]; then
    count=1
    for phase in "1 46 46 82 81 83 81 33 32" "2 29 29 70 70 59 59 40 40" "3 29 29 0 0 29 29 52 59"; do
      set -- $phase
      p=$1
      shift
      sizes=""
      for mb in "$@"; do sizes="$sizes $((mb * scale_kib))KiB"; done
      sizes=$(echo "$sizes" | sed 's/ 0KiB/ 0/g')
      for run in $(seq "$runs"); do
        for mode in aggregate static direct; do
          # shellcheck disable=SC2086
          rank_port=$((rank_port + 1))
          out=$(transfer "$mode" "$r" $sizes) || exit 1
          echo "phase$p $r $mode $run $out" >>"$work/results"
        done
      done
    done
    count=${COUNT:-2}
  fi
  stop_routers
  for site in 0 1; do
    for i in $(seq 0 $((r - 1))); do
      echo "R $r router $site.$i: $(tail -n 1 "$work/router-$site-$i.out")" >>"$work/router-stats"
    done
  done
done
"$MULTILANE" emu down --name "$name" >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

$python - "$work/results" "$nic" "$size" "$count" "$runs" "$scale_kib" <<'PY'
import re, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
nic_text = sys.argv[2]
number, unit = re.fullmatch(r"([0-9.]+)\s*([MG])bit/s", nic_text).groups()
nic = float(number) * (1000 if unit == "G" else 1)
print(f"\nTable 2: one pair, {sys.argv[4]} x {sys.argv[3]}; NIC {nic_text}; medians of {sys.argv[5]} runs\n")
print("| routers per site | mode | Mbit/s | x one NIC |")
print("|---:|---|---:|---:|")
for r in dict.fromkeys(row[1] for row in rows if row[0] == "vsR"):
    for mode in dict.fromkeys(row[2] for row in rows if row[0] == "vsR" and row[1] == r):
        rates = [float(row[5]) for row in rows if row[0] == "vsR" and row[1] == r and row[2] == mode]
        m = statistics.median(rates)
        print(f"| {r} | {mode} | {m:.0f} | {m / nic:.2f} |")
print(f"\nTable 3: 8 pairs at once, the paper's Table 3 megabytes x {sys.argv[6]} KiB; seconds until "
      f"the last sender finished (medians of {sys.argv[5]} runs)\n")
print("| phase | aggregate (AR) | static (SR) | direct (AA) | SR / AR | AA / AR |")
print("|---|---:|---:|---:|---:|---:|")
for phase in dict.fromkeys(row[0] for row in rows if row[0].startswith("phase")):
    t = {m: statistics.median(float(row[4]) for row in rows if row[0] == phase and row[2] == m)
         for m in ("aggregate", "static", "direct")}
    print(f"| {phase[5:]} | {t['aggregate']:.2f} s | {t['static']:.2f} s | {t['direct']:.2f} s | "
          f"{t['static'] / t['aggregate']:.2f} | {t['direct'] / t['aggregate']:.2f} |")
print("\nraw runs (what, R, mode, run, seconds, senders' Mbit/s):")
for row in rows:
    print("  " + " ".join(row))
PY
echo
echo "routers' counters at the end of each R:"
cat "$work/router-stats"
