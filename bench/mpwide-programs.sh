#!/bin/sh
# bench/mpwide-programs.sh — MPWide's own programs, unchanged, on multilane's MPWide.h.
#
# Builds the six programs of a checkout of djgroen/MPWide (MPWIDE_SRC) against
# include/multilane/mpwide/MPWide.h (bench/mpwide_programs.cmake copies their sources into the
# build tree next to a link named MPWide.h; nothing of MPWide is in this repository), then runs
# on 127.0.0.1, each with its own pass criterion:
#   MPWUnitTests        "Number of failed tests: 0", no "This Unit Test Failed."
#   MPWTest             server and client (4 streams, 8 MiB messages) both reach
#                       "End of iteration 19." and "MPWTest is done."
#   MPWTestConcurrent   exits 0 with "MPWTestConcurrent completed successfully." and no error
#   MPWForwarder + MPWFileCopy
#                       one file (FILE_SIZE bytes, default 64 MiB) copied through the forwarder
#                       arrives byte for byte (cmp); every process ends by itself
#   MPWDataGather       compiles (it runs until killed and has no pass criterion)
# Prints one line per program and exits 0 when all pass, 1 otherwise.
#
# Environment: MPWIDE_SRC (required; when it is unset and MPWIDE_SKIP_STATUS is set, the
# script says so and exits with that status: ctest's skip), BUILD (default build), FILE_SIZE. The programs use their
# fixed port 16256; the forwarder listens on 127.0.0.1 and the copy's server on 127.0.0.2
# (MULTILANE_BIND). Every program is bounded by `timeout`; processes and files are removed on
# exit, also on failure or interruption.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${MPWIDE_SRC:-}" ] && [ -n "${MPWIDE_SKIP_STATUS:-}" ]; then
  echo "mpwide-programs: skipped: MPWIDE_SRC is not set (a checkout of djgroen/MPWide)"
  exit "$MPWIDE_SKIP_STATUS"
fi
: "${MPWIDE_SRC:?set MPWIDE_SRC to a checkout of djgroen/MPWide}"
MPWIDE_SRC=$(cd "$MPWIDE_SRC" && pwd)
build=${BUILD:-$here/../build}
file_size=${FILE_SIZE:-67108864}
work=$(mktemp -d /tmp/mpwide-programs.XXXXXX)
pids=""
export MULTILANE_SECRET="mpwide-programs benchmark secret" MULTILANE_JOB_ID=40

cleanup() {
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_busy() {
  ss -Htln "sport = :16256" | grep -q .
}
if port_busy; then
  echo "mpwide-programs: port 16256 (the programs' fixed port) is in use; free it first" >&2
  exit 1
fi

cmake -S "$here/.." -B "$build" -DMULTILANE_MPWIDE_SRC="$MPWIDE_SRC" >"$work/configure.log" ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$build" -j2 --target mpwide_programs >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; exit 1; }
bin=$build/mpwide-programs

failures=0
report() {  # NAME OK DETAIL
  if [ "$2" = ok ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
has() { grep -q -- "$2" "$1"; }
# Waits up to 10 s until something listens on ADDRESS:16256.
await_listener() {
  for _ in $(seq 200); do
    ss -Htln "sport = :16256" | grep -q "$1:16256" && return 0
    sleep 0.05
  done
  return 1
}
await_free() {
  for _ in $(seq 200); do port_busy || return 0; sleep 0.05; done
  return 1
}

# --- MPWUnitTests ---
timeout 60 "$bin/MPWUnitTests" >"$work/unit.out" 2>&1 || true
if has "$work/unit.out" "Number of failed tests: 0" && ! has "$work/unit.out" "This Unit Test Failed"; then
  report MPWUnitTests ok "$(grep -c '^Test' "$work/unit.out") unit tests, none failed"
else
  report MPWUnitTests fail "$(tail -n 5 "$work/unit.out")"
fi

# --- MPWTest: server first (it finds nobody and listens), then the client ---
timeout 120 "$bin/MPWTest" 1 127.0.0.1 4 8 >"$work/test-server.out" 2>&1 &
server=$!
pids="$pids $server"
await_listener '0.0.0.0' || await_listener '127.0.0.1' || true
timeout 120 "$bin/MPWTest" 0 127.0.0.1 4 8 >"$work/test-client.out" 2>&1 || true
wait "$server" || true
if has "$work/test-server.out" "End of iteration 19." && has "$work/test-server.out" "MPWTest is done." &&
  has "$work/test-client.out" "End of iteration 19." && has "$work/test-client.out" "MPWTest is done."; then
  report MPWTest ok "20 exchanges of 8 MiB each way over a path of 4 streams, both ends done"
else
  report MPWTest fail "server: $(tail -n 3 "$work/test-server.out" | tr '\n' ' ') client: $(tail -n 3 "$work/test-client.out" | tr '\n' ' ')"
fi
await_free || true

# --- MPWTestConcurrent: one process, two paths, threads sending and receiving at once ---
status=0
timeout 120 "$bin/MPWTestConcurrent" 2 64 >"$work/concurrent.out" 2>&1 || status=$?
if [ "$status" = 0 ] && has "$work/concurrent.out" "MPWTestConcurrent completed successfully." &&
  ! grep -q "^Error" "$work/concurrent.out"; then
  report MPWTestConcurrent ok "exit 0, 40 blocking and 20 non-blocking exchanges of 64 KiB"
else
  report MPWTestConcurrent fail "exit $status: $(tail -n 5 "$work/concurrent.out" | tr '\n' ' ')"
fi
await_free || true

# --- MPWForwarder + MPWFileCopy: client -> forwarder (127.0.0.1) -> server (127.0.0.2) ---
mkdir -p "$work/received"
head -c "$file_size" /dev/urandom >"$work/source.bin"
MULTILANE_BIND=127.0.0.2 timeout 120 "$bin/MPWFileCopy" 127.0.0.2 0 "$work/received/" 1 \
  >"$work/cp-server.out" 2>&1 &
cp_server=$!
pids="$pids $cp_server"
await_listener '127.0.0.2' || true
printf '0\n16256\n127.0.0.2\n16256\n1\ndone\n' |
  MULTILANE_BIND=127.0.0.1 timeout 120 "$bin/MPWForwarder" >"$work/forwarder.out" 2>&1 &
forwarder=$!
pids="$pids $forwarder"
await_listener '127.0.0.1' || true
start=$(date +%s.%N)
timeout 120 "$bin/MPWFileCopy" 127.0.0.1 1 "$work/source.bin" 1 >"$work/cp-client.out" 2>&1 || true
end=$(date +%s.%N)
wait "$cp_server" || true
status=0
wait "$forwarder" || status=$?
ended=yes
[ "$status" -ge 124 ] && ended=no  # timeout stopped it (MPWForwarder itself returns 1)
if [ "$ended" = yes ] && cmp -s "$work/source.bin" "$work/received/source.bin"; then
  rate=$(echo "$file_size $start $end" | awk '{printf "%.0f", $1 * 8 / ($3 - $2) / 1e6}')
  report "MPWForwarder+MPWFileCopy" ok "$file_size bytes through the forwarder, identical, $rate Mbit/s including setup"
else
  report "MPWForwarder+MPWFileCopy" fail "forwarder ended: $ended; client: $(tail -n 2 "$work/cp-client.out" | tr '\n' ' ') server: $(tail -n 2 "$work/cp-server.out" | tr '\n' ' ') forwarder: $(tail -n 2 "$work/forwarder.out" | tr '\n' ' ')"
fi

# --- MPWDataGather: built ---
if [ -x "$bin/MPWDataGather" ]; then
  report MPWDataGather ok "compiled and linked unchanged"
else
  report MPWDataGather fail "not built"
fi

echo "mpwide-programs: $failures failed (MPWide $(git -C "$MPWIDE_SRC" rev-parse --short HEAD 2>/dev/null || echo checkout), multilane $(git -C "$here/.." rev-parse --short HEAD))"
[ "$failures" = 0 ]
