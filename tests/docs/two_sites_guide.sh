#!/usr/bin/env bash
# tests/docs/two_sites_guide.sh SOURCE_DIR BUILD_DIR — runs the `sh` blocks of docs/mpi.md's
# "Across two sites, step by step" as written, one after the other in one shell, in a scratch
# folder (HOME too) where `build` and `examples` are the tree's, on the emulated grid the
# guide brings up; then checks that rank 0 explained the 16 MiB broadcast across 2 sites as
# multilane's, naming the algorithm. The grid is taken down and the folder removed at the end,
# also on failure. Needs root (network namespaces); prints "skipped" without it.
set -euo pipefail
source_dir=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
if [ "$(id -u)" != 0 ]; then
  echo "skipped: the guide's grid needs root (network namespaces)"
  exit 0
fi
work=$(mktemp -d /tmp/two-sites-guide.XXXXXX)
cleanup() {
  "$build/multilane" emu down --name grid >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
ln -s "$build" "$work/build"
ln -s "$source_dir/examples" "$work/examples"
# The section's `sh` blocks, in order.
awk '/^## Across two sites, step by step/ { inside = 1; next }
     inside && /^## / { inside = 0 }
     inside && /^```sh$/ { block = 1; next }
     inside && block && /^```$/ { block = 0; print ""; next }
     inside && block { print }' "$source_dir/docs/mpi.md" > "$work/guide.sh"
[ -s "$work/guide.sh" ] || { echo "no sh block found in the guide" >&2; exit 1; }
cd "$work"
if ! HOME=$work timeout 600 bash -euo pipefail guide.sh > guide.log 2>&1; then
  echo "the guide's commands failed:" >&2
  cat guide.log >&2
  exit 1
fi
cat guide.log
expected='MPI_Bcast 16777216 B root 0 \(2 sites\), 8 ranks on 8 node\(s\): multilane [a-z-]+ \('
if ! grep -qE "$expected" explain.txt; then
  echo "rank 0 did not explain the broadcast as expected ('$expected'):" >&2
  cat explain.txt >&2
  exit 1
fi
echo "the guide ran as written: $(grep -m1 -E "$expected" explain.txt)"
