#!/bin/sh
# tests/mpi/as_nodes.sh PER_NODE [NODES_PER_SITE] PROGRAM [ARGS...] — runs PROGRAM as if every
# PER_NODE consecutive ranks shared a node of their own: MULTILANE_HOST_ID=node<rank / PER_NODE>
# (the rank from Open MPI's or MPICH's launcher), and MULTILANE_HOST=127.0.0.1 so that the
# "nodes" still talk over loopback. The PMPI library then joins the nodes with TCP and the
# ranks of each node with shared memory. With NODES_PER_SITE (a number), every that many nodes
# form a site: MULTILANE_SITE=site<node / NODES_PER_SITE>.
set -eu
per_node=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
node=$((rank / per_node))
case ${1:-} in
  '' | *[!0-9]*) ;;
  *)
    MULTILANE_SITE=site$((node / $1))
    export MULTILANE_SITE
    shift
    ;;
esac
MULTILANE_HOST_ID=node$node
MULTILANE_HOST=127.0.0.1
export MULTILANE_HOST_ID MULTILANE_HOST
exec "$@"
