#!/bin/sh
# tests/mpi/as_nodes.sh PER_NODE PROGRAM [ARGS...] — runs PROGRAM as if every PER_NODE
# consecutive ranks shared a node of their own: MULTILANE_HOST_ID=node<rank / PER_NODE>
# (the rank from Open MPI's or MPICH's launcher), and MULTILANE_HOST=127.0.0.1 so that the
# "nodes" still talk over loopback. The PMPI library then joins the nodes with TCP and the
# ranks of each node with shared memory.
set -eu
per_node=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
MULTILANE_HOST_ID=node$((rank / per_node))
MULTILANE_HOST=127.0.0.1
export MULTILANE_HOST_ID MULTILANE_HOST
exec "$@"
