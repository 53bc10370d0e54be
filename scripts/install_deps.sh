#!/usr/bin/env bash
# Debian packages samc builds and tests with (docs/dependencies.md says why each).
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
  libutf8proc-dev zlib1g-dev libpng-dev >/dev/null
if [ "${1:-}" = "--fuzz" ]; then
  $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev libomp-dev unzip valgrind >/dev/null
fi
