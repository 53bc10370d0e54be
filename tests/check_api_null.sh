#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every function the installed headers (include/*.h) declare has a row in
# tests/test_api_null.c, which calls it with NULL pointers (issue 23: the
# public API checks its pointers and clears the error record on entry).
# Usage: check_api_null.sh SOURCE_DIR
set -euo pipefail
src=$1
# declarations: comments stripped, joined, every "samc_name(" that follows a
# return type and ends in ");"
funcs=$(cat "$src"/include/*.h | sed 's|//.*||' | tr '\n' ' ' | sed 's|/\*[^*]*\*\+\([^/*][^*]*\*\+\)*/||g' |
  grep -oE '[A-Za-z_0-9]+[ *]+samc_[a-z0-9_]+\([^;{()]*(\([^()]*\)[^;{()]*)*\);' | grep -oE 'samc_[a-z0-9_]+\(' |
  tr -d '(' | sort -u)
[ -n "$funcs" ] || { echo "check_api_null: no declarations found"; exit 1; }
missing=0
for f in $funcs; do
  if ! grep -qE "(S|S_OK_LIVE|V)\($f\)" "$src/tests/test_api_null.c"; then
    echo "public function without a NULL-argument row in tests/test_api_null.c: $f"
    missing=1
  fi
done
echo "check_api_null: $(echo "$funcs" | wc -l) public functions, each called with NULLs"
exit $missing
