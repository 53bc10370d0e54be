#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install the Python package (python/, docs/python.md) into a virtual
# environment, .venv/ at the repository root, that also sees Debian's numpy,
# cffi and distributed (--system-site-packages): nothing is downloaded.
# Run after the library is built (scripts/demo.sh does both); then
#   .venv/bin/python -c "import samc; print(samc.__version__)"
# VENV=DIR picks another place; BUILD=DIR another build directory.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
BUILD=${BUILD:-build}
PY=/usr/bin/python3   # Debian's interpreter: the python3-* packages of install_deps.sh are its
[ -x "$VENV/bin/python" ] || "$PY" -m venv --system-site-packages "$VENV"
SAMC_BUILD_DIR="$(cd "$BUILD" && pwd)" "$VENV/bin/python" -m pip install --quiet --no-build-isolation --no-deps \
  --no-index --force-reinstall ./python
"$VENV/bin/python" -c "import samc; print('samc', samc.__version__, 'Python package installed in $VENV')"
