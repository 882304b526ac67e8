#!/bin/sh
# bench/shm-model-vs-runtime.sh — the two-level shared-memory collectives (`hier-shm`) run for
# real next to what the closed form (`multilane model`) and the simulator (`multilane sim`) say
# for the same platform file, and next to the closed form without single copy (the SMP paper's
# Table 1 alone, `shm_single_copy_from = "never"`). docs/performance.md, "Model and simulator
# against the runtime".
#
#   bench/shm-model-vs-runtime.sh [--platform FILE] [--sizes LIST] [--runs R] [--build DIR]
#
#   --platform  default examples/platforms/smp-1x2.toml (one node; its figures from
#               build/bench/copy_costs on the machine the runtime runs on)
#   --sizes     default 64KiB,1MiB (bcast: the message; the others: one rank's block)
#   --runs      runs of `multilane bench` per collective (default 3); the table gives the median
#               over runs of each run's median (7 repetitions of 10 calls)
#
# Every command is bounded by `timeout`; nothing is left behind (a temporary directory).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
platform=$here/examples/platforms/smp-1x2.toml
sizes=64KiB,1MiB
runs=3
build=$here/build
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || usage
  case $1 in
    --platform) platform=$2 ;;
    --sizes) sizes=$2 ;;
    --runs) runs=$2 ;;
    --build) build=$2 ;;
    *) usage ;;
  esac
  shift 2
done
ml=$build/multilane
[ -x "$ml" ] || { echo "shm-model-vs-runtime: no $ml (build first)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ranks=$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["placement"]["ranks"])' "$platform")
# The same platform with single copy off: the closed form of Table 1 alone.
sed 's/^shm_single_copy_from *=.*$//' "$platform" |
  sed 's/^\(\[\[site\]\]\)$/\1\nshm_single_copy_from = "never"/' > "$out/never.toml"
for c in bcast scatter gather allgather alltoall; do
  for kind in model sim; do
    timeout 60 "$ml" "$kind" --platform "$platform" --collective $c --algorithm hier-shm \
        --sizes "$sizes" --json > "$out/$c-$kind.json"
  done
  timeout 60 "$ml" model --platform "$out/never.toml" --collective $c --algorithm hier-shm \
      --sizes "$sizes" --json > "$out/$c-never.json"
  i=1
  while [ "$i" -le "$runs" ]; do
    timeout 300 "$ml" bench -n "$ranks" --platform "$platform" --collective $c \
        --algorithm hier-shm --sizes "$sizes" --repetitions 7 --iterations 10 --json \
        > "$out/$c-run$i.json"
    i=$((i + 1))
  done
done
"$python" - "$out" "$runs" "$platform" <<'PY'
import json, statistics, sys
out, runs, platform = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def times(path, key):
    return {r["size"]: r[key] for r in json.load(open(path))["results"]}
def us(s):
    return f"{s * 1e6:.1f}"
print(f"hier-shm on {platform}: runtime (median of {runs} runs) against the closed form and the simulator")
print()
print("| collective | size | runtime (us) | model (us) | runtime / model | sim (us) | runtime / sim | model, two copies only (us) |")
print("|---|---|---|---|---|---|---|---|")
for c in ["bcast", "scatter", "gather", "allgather", "alltoall"]:
    model = times(f"{out}/{c}-model.json", "time_s")
    sim = times(f"{out}/{c}-sim.json", "time_s")
    never = times(f"{out}/{c}-never.json", "time_s")
    real = {}
    for i in range(1, runs + 1):
        for size, t in times(f"{out}/{c}-run{i}.json", "median_s").items():
            real.setdefault(size, []).append(t)
    for size in sorted(real):
        r = statistics.median(real[size])
        label = f"{size >> 20} MiB" if size % (1 << 20) == 0 else f"{size >> 10} KiB" if size % 1024 == 0 else f"{size} B"
        print(f"| {c} | {label} | {us(r)} | {us(model[size])} | {r / model[size]:.2f} | {us(sim[size])} | {r / sim[size]:.2f} | {us(never[size])} |")
PY
