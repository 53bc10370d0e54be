#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Debian packages samc builds and tests with (docs/dependencies.md says why each),
# the Python package's included (python/: cffi, numpy; pytest and h5py for its
# tests, distributed for samc.batch).
#   --fuzz  clang with libFuzzer and OpenMP for the fuzz harnesses (fuzz/,
#           docs/hostile_input.md), and valgrind for CI's uninitialised-memory
#           check of the image decoders
#   --web   Chromium and Node.js, and playwright-core from the npm registry
#           (tests/web/package-lock.json), for the browser test of samc serve's
#           page (tests/web/browser_test.mjs); about 300 MB, so only on request
#   --cross qemu-user (x86-64 CPU models without AVX-512 or AVX2, and aarch64),
#           Debian's aarch64 cross compiler and the arm64 libraries
#           (multiarch) for the cross build of .ci/aarch64.sh
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config \
  libopenblas-dev libhdf5-dev libcjson-dev libzip-dev libstb-dev libjpeg-dev libcmocka-dev \
  libutf8proc-dev zlib1g-dev libpng-dev \
  libavformat-dev libavcodec-dev libswscale-dev libavutil-dev \
  libmicrohttpd-dev curl \
  python3-dev python3-cffi python3-numpy python3-pip python3-setuptools python3-wheel python3-venv \
  python3-pytest python3-h5py python3-distributed >/dev/null
for flag in "$@"; do
  case $flag in
    --fuzz)
      $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-dev libomp-dev unzip valgrind >/dev/null ;;
    --web)
      command -v node >/dev/null || $SUDO apt-get install -y -qq --no-install-recommends nodejs >/dev/null
      command -v npm >/dev/null || $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
      $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
      (cd "$(dirname "$0")/../tests/web" && npm ci --no-audit --no-fund --loglevel=error) ;;
    --cross)
      # libhdf5-dev:arm64 cannot sit beside libhdf5-dev: its runtime library
      # only (.ci/aarch64.sh takes the headers from the package file)
      $SUDO dpkg --add-architecture arm64
      $SUDO apt-get update -qq
      $SUDO apt-get install -y -qq --no-install-recommends qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
        libcjson-dev:arm64 libzip-dev:arm64 libstb-dev:arm64 libjpeg-dev:arm64 libpng-dev:arm64 libcmocka-dev:arm64 \
        libutf8proc-dev:arm64 zlib1g-dev:arm64 libgomp1:arm64 libhdf5-103-1:arm64 \
        libavformat-dev:arm64 libavcodec-dev:arm64 libswscale-dev:arm64 libavutil-dev:arm64 \
        libmicrohttpd-dev:arm64 >/dev/null ;;
    *)
      echo "install_deps.sh: unknown flag $flag (--fuzz, --web, --cross)" >&2
      exit 2 ;;
  esac
done
