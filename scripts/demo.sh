#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One command from a fresh clone: install dependencies, build, and segment the
# bundled demo image with the bundled (tiny, random-weight) model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
bash scripts/install_python.sh          # the Python package, into .venv/ (docs/python.md)
./build/samc segment --out out/demo
echo "masks, overlay and result.json are in out/demo/"
