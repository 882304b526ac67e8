# bench/lib/mpi_launch.sh — the launcher of the MPI comparisons (bench/mpi-compare.sh,
# bench/mpi-threads.sh): Open MPI on this host, or through `multilane emu mpirun` on an emulated
# grid brought up here and taken down at exit, also on failure.
#
# mpi_launch_setup BUILD RANKS [PLATFORM] sets the array `launch` (the command before the
# program; `-x VAR=VALUE` options may follow it). With PLATFORM, it needs root and sets a trap
# on EXIT.
mpi_launch_setup() {
  local build=$1 ranks=$2 platform=${3:-}
  if [ -n "$platform" ]; then
    [ "$(id -u)" = 0 ] || { echo "$(basename "$0"): --emu needs root (network namespaces)" >&2; exit 2; }
    mpi_launch_multilane=$(cd "$build" && pwd)/multilane
    mpi_launch_grid=mlcmp$$
    "$mpi_launch_multilane" emu up "$platform" --name "$mpi_launch_grid" >/dev/null
    trap '"$mpi_launch_multilane" emu down --name "$mpi_launch_grid" >/dev/null 2>&1 || true' EXIT INT TERM
    launch=("$mpi_launch_multilane" emu mpirun --name "$mpi_launch_grid" -n "$ranks" --)
  else
    launch=(mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n "$ranks")
  fi
}
