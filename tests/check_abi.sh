#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ABI of libsamc.so: the symbols it exports are exactly the committed
# list (tests/libsamc.symbols: the SAMC_API functions of include/*.h), and
# it needs no library of the parity harness (HDF5 and what HDF5 pulls in:
# curl, crypto, szip), so an embedder linking only libsamc gets none of them.
# Usage: check_abi.sh LIBSAMC.so SYMBOLS_FILE
set -euo pipefail
lib=$1 list=$2
export LC_ALL=C
got=$(nm -D --defined-only "$lib" | awk 'NF==3 {print $3}' | sort)
want=$(grep -v '^#' "$list" | sed '/^$/d' | sort)
if [ "$got" != "$want" ]; then
  echo "$(basename "$lib") exports a different set of symbols than $list:"
  diff <(echo "$want") <(echo "$got") | sed -n 's/^< /  missing now: /p; s/^> /  new export:  /p'
  echo "A deliberate change of the public API updates $list (and docs/api.md);"
  echo "an internal function that shows up here lacks hidden visibility."
  exit 1
fi
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
bad=$(echo "$needed" | grep -E -i 'hdf5|curl|crypto|ssl|libsz|libaec|cmocka' || true)
if [ -n "$bad" ]; then
  echo "$(basename "$lib") needs libraries of the parity harness or the tests:"
  echo "$bad"
  exit 1
fi
echo "abi: $(echo "$got" | wc -l) exported symbols, as listed; NEEDED: $(echo $needed)"
