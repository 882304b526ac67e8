#!/usr/bin/env bash
# make demo: the papers' algorithms compared on an example two-site grid, in about a minute.
# Usage: scripts/demo.sh [BUILD_DIR]   (outputs go to demo-out/)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
ml="$build/multilane"
out=demo-out
mkdir -p "$out"
grid=examples/platforms/two-sites-16x2.toml
wan=examples/platforms/grid-2x32-wan5ms.toml

section() { printf '\n\033[1m== %s ==\033[0m\n' "$1"; }

section "The platform: two clusters of 16 nodes, 2 NICs each, 10 ms apart"
"$ml" platform show "$grid"

section "Every algorithm's schedule, checked symbolically before anything runs"
"$ml" verify --platform "$grid" --collective all --algorithm all --sizes 0,1,7,1000,1048577 | tail -n 1

section "Broadcast on the two-site grid (simulated; broadcast paper, figure 8)"
"$ml" sim --platform "$grid" --collective bcast --algorithm all \
  --sizes 1KiB,64KiB,1MiB,16MiB,256MiB --segment auto --plot "$out/bcast-two-sites.png"

section "Scatter across a 5 ms WAN: one connection vs P node pairs (scatter/gather paper, figure 4)"
"$ml" sim --platform "$wan" --collective scatter --algorithm all \
  --sizes 64KiB,1MiB,4MiB,16MiB --plot "$out/scatter-grid.png"

section "Gather, the same with every arrow reversed (figure 5)"
"$ml" sim --platform "$wan" --collective gather --algorithm all --sizes 64KiB,1MiB,4MiB,16MiB

section "Allreduce of floats across the two sites: k node pairs cross the WAN at once (multilane-sites)"
"$ml" sim --platform "$grid" --collective allreduce --type float --op sum --algorithm all \
  --sizes 64KiB,16MiB,256MiB --segment auto --plot "$out/allreduce-two-sites.png"

small=examples/platforms/two-sites-4x2.toml
section "For real: the same schedules in 8 processes over TCP (two-sites-4x2 placement, on loopback)"
echo "Every byte checked on every rank. Loopback has no 10 ms WAN and the 8 ranks share this"
echo "machine's cores, so the ranking differs from the simulation; 'multilane emu' gives the ranks"
echo "a real shaped grid (docs/emulation.md)."
"$ml" bench -n 8 --platform "$small" --collective bcast --algorithm all \
  --sizes 64KiB,4MiB --repetitions 3 --check --plot "$out/bcast-real-loopback.png"

section "Within one node: shared memory (the SMP paper's hier-shm) against TCP, 2 processes, for real"
echo "hier-shm copies through one shared segment (or once, by the kernel, from 16 KiB); the other"
echo "algorithms send over TCP loopback between the two ranks of the same node."
"$ml" bench -n 2 --platform examples/platforms/smp-1x2.toml --collective bcast --algorithm all \
  --sizes 4KiB,1MiB --repetitions 3 --check --plot "$out/bcast-smp-node.png"

printf '\nPlots: %s/bcast-two-sites.png, %s/scatter-grid.png, %s/allreduce-two-sites.png,\n' \
  "$out" "$out" "$out"
printf '       %s/bcast-real-loopback.png, %s/bcast-smp-node.png\n' "$out" "$out"

# The headline, measured for real: an emulated two-site grid on this machine (network
# namespaces, lanes shaped to 200 Mbit/s, a 10 ms WAN delay line; docs/emulation.md), multilane's
# best broadcast against Open MPI's MPI_Bcast on that same grid. bench/emu_compare.sh brings the
# grid up, runs both sides and takes the grid down on exit, also on failure.
section "For real on an emulated two-site grid: multilane-sites against Open MPI's MPI_Bcast, 16 MiB"
skip=
if [ "$(id -u)" -ne 0 ]; then
  skip="the emulated grid needs root (network namespaces, traffic shaping): run make demo as root"
elif ! command -v mpirun >/dev/null; then
  skip="Open MPI's mpirun is missing (Debian: openmpi-bin libopenmpi-dev)"
elif [ ! -x "$build/bench/mpi_peer" ]; then
  skip="$build/bench/mpi_peer is missing (it is built when CMake finds Open MPI)"
fi
if [ -n "$skip" ]; then
  echo "Skipped: $skip."
  echo "Measured elsewhere: docs/performance.md, section 1."
else
  echo "2 sites x 4 nodes x 2 lanes (examples/platforms/two-sites-4x2.toml), 8 ranks, the same"
  echo "grid for both libraries (about a minute)."
  # The ranks' own messages go to the log; it is shown when the comparison fails.
  log=$out/emu-compare.log
  if ! bench/emu_compare.sh --build "$build" --collectives bcast --algorithms multilane-sites \
    --bcast-sizes 16MiB --runs 1 --repetitions 3 --iterations 2 \
    --plot "$out/bcast-emulated-grid-vs-openmpi.png" >"$out/emu-compare.md" 2>"$log"; then
    tail -n 20 "$log" "$out/emu-compare.md" >&2
    echo "The emulated-grid comparison failed (its output: $log, $out/emu-compare.md)." >&2
    exit 1
  fi
  sed -n '/^## Open MPI vs multilane/,$p' "$out/emu-compare.md" | sed 's/^plot: /Plot: /'
fi
