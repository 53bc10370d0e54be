#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Regenerate fixtures/amg/ (automatic-mask-generator dumps, docs/parity_amg.md)
# and check them. From the repository root (make_fixtures.sh calls it too):
#   SAM2_SRC=/work/ext/sam2 bash tools/make_amg_fixtures.sh
# Needs Debian's python3-torchvision (batched_nms) and python3-opencv
# (tools/README.md). About 1.5 minutes on 2 cores.
set -euo pipefail
set -f  # overrides contain [..]: no globbing

: "${SAM2_SRC:?set SAM2_SRC to the official sam2 checkout}"
export SAM2_SRC
export SAM2_COMMIT="${SAM2_COMMIT:-2b90b9f5ceec907a1c18123530e92e794ad901a4}"
PY=/usr/bin/python3
cd "$(dirname "$0")/.."
OUT=fixtures/amg
mkdir -p "$OUT"

T=model.image_encoder.trunk
N=model.image_encoder.neck
M=model.memory_attention
E=model.memory_encoder
# One model for all four: sam2.1, S=128, D=32, memory dim 16 (the shrink of
# tiny() in make_fixtures.sh), trunk embed 8, 1 head, stages [1,1,2,1]; seed 10;
# --structured-weights (docs/parity_amg.md: random weights otherwise give
# image-wide speckle masks). Image: 6 flat shapes on grey, 192x256, seed 10.
MODEL="--config sam2.1_hiera_t --seed 10 --set model.image_size=128
  --set $N.backbone_channel_list=[64,32,16,8] --set $N.d_model=32
  --set $N.position_encoding.num_pos_feats=32
  --set $M.d_model=32 --set $M.layer.d_model=32 --set $M.layer.dim_feedforward=64
  --set $M.num_layers=1 --set $M.layer.self_attention.embedding_dim=32
  --set $M.layer.self_attention.feat_sizes=[8,8] --set $M.layer.cross_attention.embedding_dim=32
  --set $M.layer.cross_attention.feat_sizes=[8,8] --set $M.layer.cross_attention.kv_in_dim=16
  --set $E.out_dim=16 --set $E.in_dim=32 --set $E.position_encoding.num_pos_feats=16
  --set $E.mask_downsampler.embed_dim=32 --set $E.fuser.layer.dim=32
  --set $E.mask_downsampler.kernel_size=2 --set $E.mask_downsampler.padding=0
  --set $T.embed_dim=8 --set $T.num_heads=1 --set $T.stages=[1,1,2,1]
  --set $T.window_spec=[8,4,4,2] --set $T.global_att_blocks=[3]
  --structured-weights --image-kind shapes --image-size 192x256 --image-shapes 6
  --stability-score-offset 0.25 --points-per-batch 16 --compress"

# Thresholds sit in gaps of the candidates' values (fixtures/README.md): every
# IoU / stability / NMS decision is >= 1e-4 from its threshold (the tool checks).
# A: no crops, 5x5 points (batches of 16 and 9), multimask.
# shellcheck disable=SC2086
$PY tools/dump_sam2_amg.py $MODEL --points-per-side 5 \
  --pred-iou-thresh 0.553 --stability-score-thresh 0.2858 --output-mode uncompressed_rle \
  --variant amg_a_nocrop --out "$OUT/amg_a_nocrop.h5"
# B: as A with crop_n_layers 1 (5 crops), coco_rle; trace of the first crop only.
# shellcheck disable=SC2086
$PY tools/dump_sam2_amg.py $MODEL --points-per-side 5 --crop-n-layers 1 \
  --pred-iou-thresh 0.553 --stability-score-thresh 0.2858 --output-mode coco_rle \
  --trace-crops 1 --variant amg_b_crops --out "$OUT/amg_b_crops.h5"
# C: min_mask_region_area 40 (hole + sprinkle fill on the low-res logits),
#    single-mask output (dynamic multimask fallback), binary_mask.
# shellcheck disable=SC2086
$PY tools/dump_sam2_amg.py $MODEL --points-per-side 5 --no-multimask \
  --min-mask-region-area 40 --pred-iou-thresh 0.3347 --stability-score-thresh 0.931 \
  --output-mode binary_mask --variant amg_c_minarea --out "$OUT/amg_c_minarea.h5"
# D: use_m2m (every candidate refined with its own low-res logits), 4x4 points.
# shellcheck disable=SC2086
$PY tools/dump_sam2_amg.py $MODEL --points-per-side 4 --use-m2m \
  --pred-iou-thresh 0.6094 --stability-score-thresh 0.4193 --output-mode uncompressed_rle \
  --variant amg_d_m2m --out "$OUT/amg_d_m2m.h5"
# E: explicit point_grids (points_per_side None: seven irregular points,
#    float64 in the dump), no crops.
# shellcheck disable=SC2086
$PY tools/dump_sam2_amg.py $MODEL --point-grids "$OUT/amg_e_grids.points.json" \
  --pred-iou-thresh 0.553 --stability-score-thresh 0.2858 --output-mode uncompressed_rle \
  --variant amg_e_grids --out "$OUT/amg_e_grids.h5"

$PY tools/check_amg_dump.py "$OUT/amg_a_nocrop.h5" "$OUT/amg_b_crops.h5" "$OUT/amg_c_minarea.h5" \
  "$OUT/amg_d_m2m.h5" "$OUT/amg_e_grids.h5"
ls -l "$OUT"
