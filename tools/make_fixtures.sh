#!/bin/bash
# Regenerate every committed fixture under fixtures/ (dumps, checkpoints,
# demo).  Usage, from the repository root:
#   SAM2_SRC=/work/sam2src bash tools/make_fixtures.sh
# SAM2_COMMIT must be set when $SAM2_SRC is not a git checkout (the default
# below is the commit the fixtures were made from).
set -euo pipefail
set -f  # overrides contain [..]: no globbing

: "${SAM2_SRC:?set SAM2_SRC to the official sam2 checkout}"
export SAM2_SRC
export SAM2_COMMIT="${SAM2_COMMIT:-2b90b9f5ceec907a1c18123530e92e794ad901a4}"
PY=/usr/bin/python3
cd "$(dirname "$0")/.."   # repository root: paths in the dumps' note_command stay relative
TOOLS=tools
OUT=fixtures
mkdir -p "$OUT/ckpt" "$OUT/demo"

T=model.image_encoder.trunk
N=model.image_encoder.neck
M=model.memory_attention
E=model.memory_encoder

# Shrink everything outside the trunk consistently.  The video-only memory
# encoder's MaskDownSampler keeps its 4 stride-2 convs but with kernel 2 /
# padding 0 (instead of 3 / 1) to halve its weights.
#   $1 image_size S, $2 neck/SAM-head width D, $3 memory dim, $4 trunk channel list
tiny() {
  local s=$1 d=$2 mem=$3 chans=$4 g=$(( $1 / 16 ))
  echo --set model.image_size=$s \
    --set "$N.backbone_channel_list=$chans" --set $N.d_model=$d \
    --set $N.position_encoding.num_pos_feats=$d \
    --set $M.d_model=$d --set $M.layer.d_model=$d --set $M.layer.dim_feedforward=64 \
    --set $M.num_layers=1 \
    --set $M.layer.self_attention.embedding_dim=$d \
    --set "$M.layer.self_attention.feat_sizes=[$g,$g]" \
    --set $M.layer.cross_attention.embedding_dim=$d \
    --set "$M.layer.cross_attention.feat_sizes=[$g,$g]" \
    --set $M.layer.cross_attention.kv_in_dim=$mem \
    --set $E.out_dim=$mem --set $E.in_dim=$d --set $E.position_encoding.num_pos_feats=$mem \
    --set $E.mask_downsampler.embed_dim=$d --set $E.fuser.layer.dim=$d \
    --set $E.mask_downsampler.kernel_size=2 --set $E.mask_downsampler.padding=0
}

# ---- A: sam2.1, S=128, 1 head, padded windows in stage 3 and in the
#      stage-4 q-pool block, one global block; image larger than S.
A_ARGS="--config sam2.1_hiera_t --seed 1 $(tiny 128 32 16 '[128,64,32,16]')
  --set $T.embed_dim=16 --set $T.num_heads=1 --set $T.stages=[1,2,3,1]
  --set $T.window_spec=[8,4,6,2] --set $T.global_att_blocks=[5]"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2.py" $A_ARGS --image-size 136x168 \
  --prompt "points=80,60,1;150,110,0" \
  --prompt "box=30,40,170,120 multimask=0" \
  --prompt "box=50,30,160,130 points=100,80,1;140,60,0 multimask=0" \
  --prompt "points=120,70,1 mask=prev" \
  --variant tiny_a_sam2.1_s128 --compress --out "$OUT/tiny_a_sam21_s128.h5"

# ---- B: sam2 (2.0 flags), S=128, 2 heads (head_dim 4), 2 blocks in stage 1,
#      pos_embed background 5x3; image smaller than S (upsampling).
B_ARGS="--config sam2_hiera_t --seed 2 $(tiny 128 48 16 '[64,32,16,8]')
  --set $T.embed_dim=8 --set $T.num_heads=2 --set $T.stages=[2,1,2,1]
  --set $T.window_spec=[8,4,4,4] --set $T.global_att_blocks=[4]
  --set $T.window_pos_embed_bkg_spatial_size=[5,3]"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2.py" $B_ARGS --image-size 70x90 \
  --prompt "points=30,40,1" \
  --prompt "points=20,30,1;60,45,1 multimask=0" \
  --prompt "box=10,8,70,60 points=50,20,0" \
  --prompt "mask=rand multimask=0" \
  --variant tiny_b_sam2_s128 --compress --out "$OUT/tiny_b_sam20_s128.h5"

# ---- C: sam2.1, S=160 (odd 5x5 stage-4 grid), 1 head, q-pool block with
#      window 10 (pooled window 5), padded windows in stage 4; image 100x150
#      (H upsampled, W downsampled).  Its weights are also the checkpoints.
C_ARGS="--config sam2.1_hiera_t --seed 3 $(tiny 160 32 16 '[64,32,16,8]')
  --set $T.embed_dim=8 --set $T.num_heads=1 --set $T.stages=[1,1,2,2]
  --set $T.window_spec=[10,4,6,3] --set $T.global_att_blocks=[3]"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2.py" $C_ARGS --image-size 100x150 \
  --prompt "points=40,30,1;100,60,1;120,20,0" \
  --prompt "box=20,15,130,85" \
  --prompt "box=30,20,110,80 points=70,50,1;40,70,0 mask=prev multimask=0" \
  --variant tiny_c_sam2.1_s160 --compress --out "$OUT/tiny_c_sam21_s160.h5"

# ---- D (demo): sam2.1 with the official hiera_t trunk layout (stages
#      [1,2,7,2], global [5,7,9], windows (8,4,14,7)) at S=192, embed 8:
#      stage grids 48/24/12/6, so windows 14 and 7 pad 12->14 and 6->7 (one
#      window larger than the whole map), like 64->70 and 32->35 at 1024.
$PY "$TOOLS/synth_image.py" --size 240x320 --seed 7 --out "$OUT/demo/demo.png"
D_ARGS="--config sam2.1_hiera_t --seed 4 $(tiny 192 32 16 '[64,32,16,8]')
  --set $T.embed_dim=8"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2.py" $D_ARGS --image "$OUT/demo/demo.png" \
  --prompt "points=160,120,1" \
  --prompt "box=40,30,280,200 points=100,150,1 mask=prev multimask=0" \
  --variant tiny_d_sam2.1_s192_demo --compress --out "$OUT/tiny_d_sam21_s192_demo.h5"

# ---- checkpoints (weights of C) and the demo checkpoint (weights of D)
# shellcheck disable=SC2086
$PY "$TOOLS/make_checkpoint.py" $C_ARGS --out-dir "$OUT/ckpt" --name tiny_c_f32
# shellcheck disable=SC2086
$PY "$TOOLS/make_checkpoint.py" $C_ARGS --out-dir "$OUT/ckpt" --name tiny_c_f16 --dtype float16
# shellcheck disable=SC2086
$PY "$TOOLS/make_checkpoint.py" $C_ARGS --out-dir "$OUT/ckpt" --name tiny_c_bf16 --dtype bfloat16
# shellcheck disable=SC2086
$PY "$TOOLS/make_checkpoint.py" $C_ARGS --out-dir "$OUT/ckpt" --name tiny_c_f32_noncontig \
  --noncontig --formats pt
# shellcheck disable=SC2086
$PY "$TOOLS/make_checkpoint.py" $D_ARGS --out-dir "$OUT/demo" --name tiny_d_demo \
  --formats pt,config

$PY "$TOOLS/check_dump.py" "$OUT/tiny_a_sam21_s128.h5" "$OUT/tiny_b_sam20_s128.h5" \
  "$OUT/tiny_c_sam21_s160.h5" "$OUT/tiny_d_sam21_s192_demo.h5"
$PY "$TOOLS/check_checkpoints.py" "$OUT"
ls -l "$OUT" "$OUT/ckpt" "$OUT/demo"
