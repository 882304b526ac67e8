#!/usr/bin/env bash
# bench/apps-on-grid.sh — two real applications, Debian's LAMMPS and HPCC (Open MPI builds), on
# an emulated two-site grid, alone and with the PMPI library, side by side in one run:
# time to solution, the share of it spent in collectives, and whether the results agree.
#
#   bench/apps-on-grid.sh [--platform FILE] [-n RANKS] [--runs R] [--apps LIST] [--build DIR]
#                         [--keep DIR]
#
#   --platform  default examples/platforms/two-sites-4x2.toml
#   -n          ranks (default 8: HPCC's process grid in bench/apps/hpccinf.txt is 2 x 4)
#   --runs      runs of each case and side, the sides alternating (default 3); times are medians
#   --apps      lammps, hpcc or both (default lammps,hpcc)
#   --build     build directory with multilane and libmultilane_mpi.so (default build)
#   --keep      keep every run's output there (default: a temporary directory, removed)
#
# The inputs are pinned in bench/apps/: three LAMMPS decks (lj-nve.in: a Lennard-Jones melt with
# `fix nve`, whose thermodynamics must match to the last printed digit; lj-nvt.in: a thermostat
# that reads the temperature every step; lj-reset.in: `reset_atom_ids sort yes`, which calls
# MPI_Alltoallv, MPI_Alltoall and MPI_Scan; both within 1e-6 relative) and HPCC's hpccinf.txt
# (N 4000, NB 80, P x Q 2 x 4), whose verifications must all pass. Both sides preload the
# library with MULTILANE_PROFILE=1, so each reports its time in collectives; "alone" runs it with
# MULTILANE_MPI=off, which leaves every call to the MPI library. "library" starts from the
# tuning file its first run writes. Needs root (the grid's network namespaces) and
# `scripts/install-deps.sh apps` (LAMMPS, HPCC). The grid is taken down at the end, also on
# failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
platform=$here/../examples/platforms/two-sites-4x2.toml
ranks=8
runs=3
apps=lammps,hpcc
build=build
keep=""
while [ $# -gt 0 ]; do
  case $1 in
    --platform) platform=$2; shift 2 ;;
    -n) ranks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --apps) apps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "apps-on-grid: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "apps-on-grid: needs root (the grid's network namespaces)" >&2; exit 2; }
for program in lmp hpcc; do
  case ",$apps," in *",${program/lmp/lammps},"*) ;; *) continue ;; esac
  command -v "$program" >/dev/null ||
    { echo "apps-on-grid: $program is missing: scripts/install-deps.sh apps" >&2; exit 2; }
done
build=$(cd "$build" && pwd)
multilane=$build/multilane
library=$build/libmultilane_mpi.so
for f in "$multilane" "$library"; do
  [ -e "$f" ] || { echo "apps-on-grid: $f is missing (cmake --build $build)" >&2; exit 2; }
done
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d /tmp/apps-on-grid.XXXXXX)
fi
grid="apps$$"
cleanup() {
  "$multilane" emu down --name "$grid" >/dev/null 2>&1 || true
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$multilane" emu up "$platform" --name "$grid" >/dev/null
tuning=$work/tuning.toml
rm -f "$tuning"

# run_case APP CASE SIDE RUN: one run in its own folder, its wall time in `seconds`.
run_case() {
  local app=$1 case=$2 side=$3 run=$4
  local dir=$work/$app-$case-$side-$run
  mkdir -p "$dir"
  local env=(-x LD_PRELOAD="$library" -x MULTILANE_PROFILE=1)
  if [ "$side" = alone ]; then
    env+=(-x MULTILANE_MPI=off)
  else
    env+=(-x MULTILANE_TUNING="$tuning")
  fi
  local program
  if [ "$app" = lammps ]; then
    program=(lmp -in "$here/apps/$case.in" -log "$dir/log.lammps" -screen none)
  else
    cp "$here/apps/hpccinf.txt" "$dir/"
    program=(hpcc)
  fi
  local start end
  start=$(date +%s.%N)
  if ! timeout 900 "$multilane" emu mpirun --name "$grid" -n "$ranks" -- -wdir "$dir" \
      "${env[@]}" "${program[@]}" >"$dir/stdout" 2>"$dir/stderr"; then
    echo "apps-on-grid: $app $case ($side, run $run) failed; its output is in $dir" >&2
    keep=$work
    exit 1
  fi
  end=$(date +%s.%N)
  echo "$end - $start" | bc >"$dir/seconds"
  echo "  $app $case $side run $run: $(cat "$dir/seconds") s" >&2
}

cases=()
case ",$apps," in *,lammps,*) cases+=(lammps:lj-nve lammps:lj-nvt lammps:lj-reset) ;; esac
case ",$apps," in *,hpcc,*) cases+=(hpcc:hpcc) ;; esac
for run in $(seq 1 "$runs"); do
  for entry in "${cases[@]}"; do
    app=${entry%%:*}
    name=${entry#*:}
    if [ $((run % 2)) = 1 ]; then sides=(alone library); else sides=(library alone); fi
    for side in "${sides[@]}"; do run_case "$app" "$name" "$side" "$run"; done
  done
done
echo "# bench/apps-on-grid.sh on $(basename "$platform"), $ranks ranks, $runs run(s) per side," \
  "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%F)," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$here/apps_on_grid_table.py" "$work"
