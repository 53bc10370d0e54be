#!/usr/bin/env bash
# Debian packages samc builds and tests with (docs/dependencies.md says why each),
# the Python package's included (python/: cffi, numpy; pytest and h5py for its
# tests, distributed for samc.batch).
#   --fuzz  clang with libFuzzer and OpenMP for the fuzz harnesses (fuzz/,
#           docs/hostile_input.md), and valgrind for CI's uninitialised-memory
#           check of the image decoders
#   --web   Chromium and Node.js, and playwright-core from the npm registry
#           (tests/web/package-lock.json), for the browser test of samc serve's
#           page (tests/web/browser_test.mjs); about 300 MB, so only on request
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
    *)
      echo "install_deps.sh: unknown flag $flag (--fuzz, --web)" >&2
      exit 2 ;;
  esac
done
