#!/usr/bin/env bash
# Debian packages samc builds and tests with (docs/dependencies.md says why each),
# the Python package's included (python/: cffi, numpy; pytest and h5py for its
# tests, distributed for samc.batch).
# --fuzz adds clang with libFuzzer and OpenMP for the fuzz harnesses (fuzz/,
# docs/hostile_input.md), and valgrind for CI's uninitialised-memory check
# of the image decoders.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libopenblas-dev libhdf5-dev libcjson-dev libzip-dev libstb-dev libjpeg-dev libcmocka-dev \
  libutf8proc-dev zlib1g-dev libpng-dev \
  python3-dev python3-cffi python3-numpy python3-pip python3-setuptools python3-wheel python3-venv \
  python3-pytest python3-h5py python3-distributed >/dev/null
if [ "${1:-}" = "--fuzz" ]; then
  $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev libomp-dev unzip valgrind >/dev/null
fi
