#!/usr/bin/env bash
# tests/install/check_install.sh BUILD_DIR WORK_DIR — installs BUILD_DIR into WORK_DIR/prefix,
# then builds and runs tests/install/consumer against it twice: with find_package(multilane)
# and with pkg-config. Prints "install ok" when both work.
set -euo pipefail
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/multilane/communicator.hpp include/multilane/mpwide/MPWide.h lib/libmultilane.so lib/libmultilane_mpi.so \
         lib/libmultilane_mpich.so bin/multilane lib/cmake/multilane/multilaneConfig.cmake \
         lib/pkgconfig/multilane.pc; do
  [ -e "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; exit 1; }
done

cmake -S "$here/consumer" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log"
cmake --build "$work/cmake-build" > "$work/build.log"
"$work/cmake-build/consumer"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ -std=c++20 "$here/consumer/main.cpp" -o "$work/pkg-consumer" $(pkg-config --cflags --libs multilane) \
    -Wl,-rpath,"$(pkg-config --variable=libdir multilane)"
"$work/pkg-consumer"
# An MPWide program finds our MPWide.h under its own name and links with libmultilane alone.
printf '#include "MPWide.h"\nint main() { MPW_setAutoTuning(false); return MPW_AutoTuning() ? 1 : MPW_NumChannels(); }\n' \
  > "$work/mpwide-consumer.cpp"
# shellcheck disable=SC2046
g++ -std=c++20 "$work/mpwide-consumer.cpp" -o "$work/mpwide-consumer" \
    -I"$(pkg-config --variable=includedir multilane)/multilane/mpwide" $(pkg-config --libs multilane) \
    -Wl,-rpath,"$(pkg-config --variable=libdir multilane)"
"$work/mpwide-consumer"
"$prefix/bin/multilane" algorithms > /dev/null
echo "install ok"
