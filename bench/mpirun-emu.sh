#!/bin/sh
# bench/mpirun-emu.sh NAME -n N [MPIRUN OPTIONS...] -- PROGRAM [ARGS...]
#
# Runs Open MPI's mpirun across the nodes of the emulated grid NAME (made by
# `multilane emu up PLATFORM --name NAME`), so that Open MPI's collectives run on exactly the
# grid multilane and iperf3 use. mpirun runs inside node 0's namespace; Open MPI starts its
# daemon on every other node through an rsh agent — this script, called back as
# `mpirun-emu.sh --agent HOST COMMAND...` — which enters the namespace of the node owning
# lane address HOST. Ranks are placed one per core, nodes in platform order; MPI traffic uses
# TCP over the lanes (198.18.0.0/15) only.
#
# Environment: MULTILANE (default: build/multilane next to this script's folder).
# Example:
#   build/multilane emu up examples/platforms/two-sites-4x2.toml --name grid
#   bench/mpirun-emu.sh grid -n 8 -- /usr/bin/hostname
set -eu

here=$(cd "$(dirname "$0")" && pwd)
MULTILANE=${MULTILANE:-$here/../build/multilane}

if [ "${1:-}" = "--agent" ]; then
  # Called by mpirun as an rsh agent: HOST then the remote command as words (joined and
  # handed to a shell, as ssh does).
  host=$2
  shift 2
  # Every emulated node has this machine's host name and /tmp, so daemons starting at once
  # raced for one session directory ("mkdir /tmp/ompi.HOST.0/jf.N: File exists"): each node
  # gets a directory of its own.
  mkdir -p "$MULTILANE_EMU_SESSION/$host"
  export OMPI_MCA_orte_tmpdir_base="$MULTILANE_EMU_SESSION/$host"
  exec "$MULTILANE" emu exec --name "$MULTILANE_EMU_NAME" "$host" -- sh -c "$*"
fi

usage() {
  echo "usage: $0 NAME -n N [MPIRUN OPTIONS...] -- PROGRAM [ARGS...]" >&2
  exit 2
}
[ $# -ge 4 ] || usage
name=$1
shift
[ "$1" = "-n" ] || usage
ranks=$2
shift 2
mpirun_options=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  mpirun_options="$mpirun_options $1"
  shift
done
[ "${1:-}" = "--" ] || usage
shift
[ $# -ge 1 ] || usage

session=$(mktemp -d /tmp/mpirun-emu.XXXXXX)
trap 'rm -rf "$session"' EXIT INT TERM
hostfile=$session/hostfile
"$MULTILANE" emu hostfile --name "$name" >"$hostfile"
mkdir "$session/mpirun"

export MULTILANE MULTILANE_EMU_NAME="$name" MULTILANE_EMU_SESSION="$session"
export OMPI_MCA_orte_tmpdir_base="$session/mpirun"
# Several daemons on one machine at once: orted's hwloc run-time control, which shares the
# topology through a fixed-address mapping, crashed now and then in
# hwloc_shmem_topology_write. Ranks are not bound anyway (--bind-to none).
export OMPI_MCA_rtc="^hwloc"
# shellcheck disable=SC2086  # the extra mpirun options are words
"$MULTILANE" emu exec --name "$name" 0 -- \
  mpirun --allow-run-as-root --hostfile "$hostfile" -n "$ranks" \
  --mca plm_rsh_agent "$here/mpirun-emu.sh --agent" \
  --mca btl tcp,self --mca btl_tcp_if_include 198.18.0.0/15 \
  --mca oob_tcp_if_include 198.18.0.0/15 --bind-to none $mpirun_options "$@"
