# SPDX-License-Identifier: Apache-2.0
# cli_lib.sh - what the CLI test scripts share, sourced by each with its own
# arguments (`. "$(dirname "$0")/cli_lib.sh" "$@"`): SAMC and SRC from the two
# arguments (the samc binary, the source tree), a private TMP removed on
# exit, the ok/bad counters, PY (a Python with NumPy, for checking JSON
# and raw outputs) and the closing summary (the script's status).
set -u
SAMC=$1
SRC=$2
PY=/usr/bin/python3 # Debian's, with python3-numpy (the default python3 on PATH may be another)
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
summary() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}
