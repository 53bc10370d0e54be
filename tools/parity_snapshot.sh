#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# parity_snapshot.sh OUTDIR [SAMC] - run `samc parity --json` on every
# committed fixture with ref, fast and bf16, chained and isolated, into
# OUTDIR/<fixture>.<impl>.<mode>.json. Each row carries the digest of the
# bytes samc produced, so tools/parity_snapshot_diff.py tells whether two
# trees (before and after a refactor) compute bit-identical outputs.
set -uo pipefail
out=${1:?usage: parity_snapshot.sh OUTDIR [SAMC]}
samc=${2:-build/samc}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for dump in fixtures/*.h5 fixtures/video/*.h5 fixtures/sam3/*.h5 fixtures/amg/*.h5; do
  name=$(basename "$dump" .h5)
  for impl in ref fast bf16; do
    for mode in chained isolated; do
      flag=""; [ "$mode" = isolated ] && flag=--isolated
      "$samc" parity "$dump" --impl "$impl" $flag --json "$out/$name.$impl.$mode.json" >/dev/null 2>&1
      echo "$name $impl $mode rc=$?"
    done
  done
done
