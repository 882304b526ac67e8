# bench/lib/emu_node.sh — running commands on the nodes of an emulated grid, bounded in time.
# Sourced by the bench/wan-emu-*.sh scripts; they set $MULTILANE (the multilane binary) and
# $name (the emulation's name) before calling these.

# in_node SECONDS NODE COMMAND...: runs COMMAND in the node's namespace, killed after SECONDS.
in_node() {
  limit=$1 n=$2
  shift 2
  timeout "$limit" "$MULTILANE" emu exec --name "$name" "$n" -- "$@"
}

# in_node_background SECONDS NODE COMMAND... &: the same, replacing the background subshell, so
# that $! is the process to signal.
in_node_background() {
  limit=$1 n=$2
  shift 2
  exec timeout "$limit" "$MULTILANE" emu exec --name "$name" "$n" -- "$@"
}
