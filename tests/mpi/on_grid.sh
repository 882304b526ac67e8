#!/bin/sh
# tests/mpi/on_grid.sh [--grid-platform] BUILD_DIR PLATFORM RANKS PROGRAM [ARGS...] — runs an MPI
# program with the PMPI library preloaded (MULTILANE_EXPLAIN=1) across an emulated grid of
# PLATFORM, through `multilane emu mpirun`, and takes the grid down again, also on failure.
# The library discovers the platform, or with --grid-platform reads the grid's own copy
# (MULTILANE_PLATFORM=/run/multilane/NAME/platform.toml, which names every lane's address).
# Exits 77 (skipped) when not root: the grid's namespaces need it.
set -eu
[ "$(id -u)" = 0 ] || { echo "skipped: emulated grids need root"; exit 77; }
grid_platform=false
if [ "$1" = --grid-platform ]; then grid_platform=true; shift; fi
build=$(cd "$1" && pwd)
platform=$2
ranks=$3
shift 3
grid=mlgrid$$
"$build/multilane" emu up "$platform" --name "$grid" >/dev/null
trap '"$build/multilane" emu down --name "$grid" >/dev/null 2>&1 || true' EXIT INT TERM
if $grid_platform; then
  set -- -x "MULTILANE_PLATFORM=/run/multilane/$grid/platform.toml" "$@"
fi
"$build/multilane" emu mpirun --name "$grid" -n "$ranks" -- \
  -x "LD_PRELOAD=$build/libmultilane_mpi.so" -x MULTILANE_EXPLAIN=1 "$@"
