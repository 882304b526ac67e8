#!/usr/bin/env bash
# Installs every build, test and demo dependency of multilane from Debian's packages.
# Idempotent: packages already present are not downloaded again, and apt is skipped
# entirely when nothing is missing (so it also works offline once installed).
#
#   scripts/install-deps.sh          what `make test` and `make demo` need
#   scripts/install-deps.sh fuzz     that, and clang (its libFuzzer) for `make fuzz`
#   scripts/install-deps.sh apps     that, and LAMMPS and HPCC for bench/apps-on-grid.sh
#   scripts/install-deps.sh load     that, and stress-ng for bench/test-under-load.sh
set -euo pipefail

packages=(
  cmake g++ make ninja-build pkg-config
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libasio-dev libxxhash-dev libsodium-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhwloc-dev libopenmpi-dev openmpi-bin libmpich-dev mpich
  python3-matplotlib libsimgrid-dev iperf3 iproute2
)
case "${1:-}" in
  fuzz) packages+=(clang) ;;
  apps) packages+=(lammps hpcc bc) ;;
  load) packages+=(stress-ng bc) ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
