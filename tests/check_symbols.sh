#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every global symbol the samc library defines starts with samc_ (public) or
# samc__ (internal), so a program that links samc can define its own `mlp` or
# `fast_gelu`. GCC names an `omp critical(samc_x)` section
# .gomp_critical_user_samc_x (a common symbol, global in a shared library). Usage: check_symbols.sh LIBRARY (.a or .so).
set -euo pipefail
lib=$1
bad=$(nm -g --defined-only "$lib" | awk 'NF==3 && $2 ~ /[TDBRVWGS]/ {print $3}' | grep -v -E '^_?samc_|^\.gomp_critical_user_samc_|^__(odr_asan|asan|ubsan|sancov)' | sort -u || true)
if [ -n "$bad" ]; then
  echo "global symbols of $lib without the samc_ prefix:"
  echo "$bad"
  exit 1
fi
echo "symbols: every global of $(basename "$lib") starts with samc_"
