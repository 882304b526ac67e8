#!/bin/sh
# bench/simgrid-peer.sh — the SimGrid comparison of docs/performance.md: multilane's simulator and
# SimGrid 3.32 on the broadcast paper's two-site platform (2 x 16 nodes, two 1 Gbit/s lanes each,
# 10 ms WAN), as it is and with a 1 MiB TCP window on the WAN (52 MB/s per connection, so the
# per-connection cap and SimGrid's TCP-gamma come into play).
#
#   bench/simgrid-peer.sh [BUILD_DIR] [RUNS]     defaults: build-simgrid 5
#
# Builds simgrid_peer in BUILD_DIR (configured RelWithDebInfo if new), then prints both tables.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build-simgrid}
runs=${2:-5}
case $build in /*) ;; *) build=$here/$build ;; esac
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j2 --target simgrid_peer >/dev/null
peer=$build/bench/simgrid_peer
cd "$here"
platform=examples/platforms/two-sites-16x2.toml
"$peer" --platform "$platform" --sizes 64KiB,1MiB,16MiB --runs "$runs"
echo
"$peer" --platform "$platform" --sizes 64KiB,1MiB,16MiB --runs "$runs" --tcp-window 1MiB
