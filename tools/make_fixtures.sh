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
mkdir -p "$OUT/ckpt" "$OUT/demo" "$OUT/video"

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

# ---- video task (tools/dump_sam2_video.py).  The video modules keep the
#      official structure (MaskDownSampler kernel 3 / padding 1 with its 4
#      stride-2 convs, 2 fuser CXBlocks, num_maskmem 7, object pointers split
#      into C/mem_dim tokens) at width D, with 2 memory-attention layers;
#      the trunk is minimal (embed 8, stages [1,1,2,1]), the image fixtures
#      cover the trunk.
#   $1 image_size S, $2 width D, $3 memory dim, $4 trunk channel list
vtiny() {
  local s=$1 d=$2 mem=$3 chans=$4 g=$(( $1 / 16 ))
  echo --set model.image_size=$s \
    --set "$N.backbone_channel_list=$chans" --set $N.d_model=$d \
    --set $N.position_encoding.num_pos_feats=$d \
    --set $M.d_model=$d --set $M.layer.d_model=$d --set $M.layer.dim_feedforward=64 \
    --set $M.num_layers=2 \
    --set $M.layer.self_attention.embedding_dim=$d \
    --set "$M.layer.self_attention.feat_sizes=[$g,$g]" \
    --set $M.layer.cross_attention.embedding_dim=$d \
    --set "$M.layer.cross_attention.feat_sizes=[$g,$g]" \
    --set $M.layer.cross_attention.kv_in_dim=$mem \
    --set $E.out_dim=$mem --set $E.in_dim=$d --set $E.position_encoding.num_pos_feats=$mem \
    --set $E.mask_downsampler.embed_dim=$d --set $E.fuser.layer.dim=$d \
    --set $T.embed_dim=8 --set $T.stages=[1,1,2,1] --set $T.window_spec=[8,4,4,2] \
    --set $T.global_att_blocks=[3]
}

# ---- V1: sam2.1, S=128, D=32, memory dim 16 (pointers as 2 tokens), synthetic
#      5-frame 96x144 clip (seed 30; see fixtures/README.md for the seed choice).  Object 1: click, then a negative click
#      added with clear=0 on frame 0, a second prompted frame 3; object 2 added
#      on frame 2 with a box.  Forward from frame 2 (an object cannot be
#      tracked before its first prompted frame in fp32, see tools/README.md).
#      Both objects get object scores <= 0 on tracked and prompted frames.
V1_ARGS="--config sam2.1_hiera_t --seed 30 $(vtiny 128 32 16 '[64,32,16,8]')
  --set $T.num_heads=1"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2_video.py" $V1_ARGS --clip-size 96x144 --clip-frames 5 \
  --prompt "frame=0 obj=1 points=50,40,1" \
  --prompt "frame=0 obj=1 points=90,60,0 clear=0" \
  --prompt "frame=2 obj=2 box=70,20,130,80" \
  --prompt "frame=3 obj=1 points=60,45,1" \
  --start 2 \
  --variant tiny_v1_sam2.1_s128 --compress --out "$OUT/video/tiny_v1_sam21_s128.h5"

# ---- V2: sam2 (2.0 flags), S=128, D=32, memory dim 8 (pointers as 4 tokens,
#      like 256/64), 2 trunk heads, synthetic 5-frame 80x112 clip (seed 43).
#      Object 1: a PNG mask prompt at 160x224 (downsampled with antialias);
#      object 3: a click, replaced (clear=1) by two clicks that reuse the first
#      prediction as mask input.  Reverse from frame 4, max 2 frames (4, 3, 2),
#      non_overlap_masks=True (as tools/vos_inference.py).
$PY -c "
from PIL import Image, ImageDraw
im = Image.new('L', (224, 160), 0)
ImageDraw.Draw(im).polygon([(40, 30), (150, 50), (170, 120), (60, 140)], fill=255)
im.save('$OUT/video/v2_mask.png')"
V2_ARGS="--config sam2_hiera_t --seed 43 $(vtiny 128 32 8 '[64,32,16,8]')
  --set $T.num_heads=2"
# shellcheck disable=SC2086
$PY "$TOOLS/dump_sam2_video.py" $V2_ARGS --clip-size 80x112 --clip-frames 5 \
  --prompt "frame=4 obj=1 mask=$OUT/video/v2_mask.png" \
  --prompt "frame=4 obj=3 points=30,50,1" \
  --prompt "frame=4 obj=3 points=80,30,1;20,20,0 clear=1" \
  --reverse --start 4 --max-frames 2 --non-overlap-masks \
  --variant tiny_v2_sam2_s128 --compress --out "$OUT/video/tiny_v2_sam20_s128.h5"

$PY "$TOOLS/check_dump.py" "$OUT/tiny_a_sam21_s128.h5" "$OUT/tiny_b_sam20_s128.h5" \
  "$OUT/tiny_c_sam21_s160.h5" "$OUT/tiny_d_sam21_s192_demo.h5" \
  "$OUT/video/tiny_v1_sam21_s128.h5" "$OUT/video/tiny_v2_sam20_s128.h5"
$PY "$TOOLS/check_checkpoints.py" "$OUT"
ls -l "$OUT" "$OUT/ckpt" "$OUT/demo" "$OUT/video"
