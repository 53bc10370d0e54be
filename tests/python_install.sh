#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CTest fixture `python_install`: pip-installs the Python package the way a
# user does (docs/python.md: pip, Debian's setuptools and cffi, no network)
# into BUILD/python-site, against BUILD's libsamc. pip builds in the tree it
# is given, so it gets a copy of python/'s sources (the source tree stays
# untouched and an earlier in-tree build cannot leak in).
#   python_install.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
PY=$1 SRC=$2 BUILD=$3
rm -rf "$BUILD/python-src" "$BUILD/python-site"
mkdir -p "$BUILD/python-src/samc"
cp "$SRC"/python/pyproject.toml "$SRC"/python/setup.py "$SRC"/python/build_ffi.py "$BUILD/python-src/"
cp "$SRC"/python/samc/*.py "$BUILD/python-src/samc/"
SAMC_BUILD_DIR="$BUILD" SAMC_INCLUDE_DIR="$SRC/include" \
  "$PY" -m pip install --quiet --no-build-isolation --no-deps --no-index --root-user-action=ignore \
  --target "$BUILD/python-site" "$BUILD/python-src"
"$PY" -c "import sys; sys.path.insert(0, '$BUILD/python-site'); import samc; print('samc', samc.__version__, 'from', samc.__file__)"
