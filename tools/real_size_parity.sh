#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On-demand real-size parity: sam2.1_hiera_t with seeded random weights at 1024
# on a 900x1200 synthetic image, dumped by the official code, then checked by
# samc (ref by default). Not part of CI (the dump is ~1 GB and ref takes ~4 min).
# usage: SAM2_SRC=/path/to/sam2 bash tools/real_size_parity.sh [IMPL] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
IMPL=${1:-ref}
OUT=${2:-/tmp/samc_real_size}
: "${SAM2_SRC:?set SAM2_SRC to a checkout of facebookresearch/sam2}"
mkdir -p "$OUT"
if [ ! -f "$OUT/real_t.h5" ]; then
  /usr/bin/python3 tools/dump_sam2.py --sam2-commit "${SAM2_COMMIT:-2b90b9f5ceec907a1c18123530e92e794ad901a4}" \
    --config sam2.1_hiera_t --seed 7 --image-size 900x1200 \
    --prompt "points=600,400,1" \
    --prompt "box=300,200,900,700 multimask=0" \
    --prompt "points=500,450,1;700,300,0 mask=prev multimask=0" \
    --variant real_t --compress --out "$OUT/real_t.h5"
fi
./build/samc parity "$OUT/real_t.h5" --impl "$IMPL" --json "$OUT/real_t_$IMPL.json" | tee "$OUT/real_t_$IMPL.txt"
