#!/usr/bin/env bash
# Debian packages samc builds and tests with (docs/dependencies.md says why each),
# the Python package's included (python/: cffi, numpy; pytest and h5py for its
# tests, distributed for samc.batch).
# --fuzz adds clang with libFuzzer and OpenMP for the fuzz harnesses (fuzz/,
# docs/hostile_input.md); --cross adds qemu-user (x86-64 CPU models without
# AVX-512 or AVX2, and aarch64), Debian's aarch64 cross compiler and the
# arm64 libraries (multiarch) for the cross build of .ci/aarch64.sh.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libopenblas-dev libhdf5-dev libcjson-dev libzip-dev libstb-dev libjpeg-dev libcmocka-dev \
  libutf8proc-dev zlib1g-dev \
  python3-dev python3-cffi python3-numpy python3-pip python3-setuptools python3-wheel python3-venv \
  python3-pytest python3-h5py python3-distributed >/dev/null
for opt in "$@"; do
  case $opt in
  --fuzz)
    $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev libomp-dev unzip >/dev/null ;;
  --cross)
    # libhdf5-dev:arm64 cannot sit beside libhdf5-dev: its runtime library
    # only (.ci/aarch64.sh takes the headers from the package file)
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
      libcjson-dev:arm64 libzip-dev:arm64 libstb-dev:arm64 libjpeg-dev:arm64 libcmocka-dev:arm64 \
      libutf8proc-dev:arm64 zlib1g-dev:arm64 libgomp1:arm64 libhdf5-103-1:arm64 >/dev/null ;;
  *) echo "install_deps.sh: unknown option $opt (--fuzz, --cross)" >&2; exit 2 ;;
  esac
done
