#!/bin/sh
# tests/mpi/on_grid.sh BUILD_DIR PLATFORM RANKS PROGRAM [ARGS...] — runs an MPI program with the
# PMPI library preloaded (MULTILANE_EXPLAIN=1, no platform file) across an emulated grid of
# PLATFORM, through `multilane emu mpirun`, and takes the grid down again, also on failure.
# Exits 77 (skipped) when not root: the grid's namespaces need it.
set -eu
[ "$(id -u)" = 0 ] || { echo "skipped: emulated grids need root"; exit 77; }
build=$(cd "$1" && pwd)
platform=$2
ranks=$3
shift 3
grid=mlgrid$$
"$build/multilane" emu up "$platform" --name "$grid" >/dev/null
trap '"$build/multilane" emu down --name "$grid" >/dev/null 2>&1 || true' EXIT INT TERM
"$build/multilane" emu mpirun --name "$grid" -n "$ranks" -- \
  -x "LD_PRELOAD=$build/libmultilane_mpi.so" -x MULTILANE_EXPLAIN=1 "$@"
