#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On-demand real-size chained video parity: sam2.1_hiera_t with seeded random
# weights at 1024, a 4-frame 360x480 synthetic clip, two objects (a click and a
# box on frame 0), dumped by the official SAM2VideoPredictor, then checked by
# samc chained (bf16 rounding flips re-synchronised, docs/parity.md). Not part
# of CI (the dump is ~1.5 GB; fast takes ~1 min, ref ~1 h on 2 cores).
# usage: SAM2_SRC=/path/to/sam2 bash tools/real_size_video_parity.sh [IMPL] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
IMPL=${1:-fast}
OUT=${2:-/tmp/samc_real_video}
: "${SAM2_SRC:?set SAM2_SRC to a checkout of facebookresearch/sam2}"
mkdir -p "$OUT"
if [ ! -f "$OUT/real_t_video.h5" ]; then
  /usr/bin/python3 tools/dump_sam2_video.py --sam2-src "$SAM2_SRC" \
    --sam2-commit "${SAM2_COMMIT:-2b90b9f5ceec907a1c18123530e92e794ad901a4}" \
    --config sam2.1_hiera_t --seed 7 --clip-size 360x480 --clip-frames 4 \
    --prompt "frame=0 obj=1 points=150,120,1" --prompt "frame=0 obj=2 box=250,150,420,330" \
    --variant real_t_video --compress --out "$OUT/real_t_video.h5"
fi
./build/samc parity "$OUT/real_t_video.h5" --impl "$IMPL" --json "$OUT/real_t_video_$IMPL.json" |
  tee "$OUT/real_t_video_$IMPL.txt"
