#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI behaviour of `samc`: a successful segment run on the bundled demo and
# official-format checkpoints, and the bad inputs of the ref-image issue, each
# with a non-zero exit, a message naming the problem and no output written.
# usage: cli_tests.sh SAMC_BINARY SOURCE_DIR
. "$(dirname "$0")/cli_lib.sh" "$@"

# expect_fail NAME EXPECTED_SUBSTRING ARGS... : non-zero exit, stderr names the problem, no outputs.
expect_fail() {
  local name=$1 want=$2
  shift 2
  local out="$TMP/out_$name"
  "$SAMC" "$@" --out "$out" >"$TMP/stdout" 2>"$TMP/stderr"
  local rc=$?
  if [ $rc -eq 0 ]; then bad "$name: exit 0"; return; fi
  if [ $rc -ge 128 ]; then bad "$name: crashed (rc $rc)"; cat "$TMP/stderr"; return; fi
  if ! grep -q -- "$want" "$TMP/stderr"; then bad "$name: message lacks '$want': $(cat "$TMP/stderr")"; return; fi
  if [ -e "$out/result.json" ] || [ -e "$out/mask_0.png" ]; then bad "$name: wrote outputs"; return; fi
  ok "$name"
}

CK="$SRC/fixtures/ckpt/tiny_c_f32.pt"
CFG="$SRC/fixtures/ckpt/tiny_c_f32.config.json"
IMG="$SRC/fixtures/demo/demo.png"

# --- success: the bundled demo and an official-format checkpoint ---------------
if "$SAMC" segment --out "$TMP/demo" >"$TMP/stdout" 2>"$TMP/stderr" &&
   [ -s "$TMP/demo/overlay.png" ] && [ -s "$TMP/demo/mask_2.png" ] && grep -q "\"predicted_iou\"" "$TMP/demo/result.json" && ! grep -q "\"iou_prediction\"" "$TMP/demo/result.json"; then
  ok "demo segment"
else
  bad "demo segment: $(cat "$TMP/stderr")"
fi
for ck in "$CK" "$SRC/fixtures/ckpt/tiny_c_f32.safetensors" "$SRC/fixtures/ckpt/tiny_c_bf16.pt"; do
  if "$SAMC" segment --model "$ck" --config "$CFG" --image "$IMG" --box 40,30,200,180 --point 100,100,1 \
       --out "$TMP/seg" >"$TMP/stdout" 2>"$TMP/stderr" && [ -s "$TMP/seg/mask_0.png" ] && [ ! -e "$TMP/seg/mask_1.png" ]; then
    ok "segment $(basename "$ck") box+point, single mask"
  else
    bad "segment $(basename "$ck"): $(cat "$TMP/stderr")"
  fi
  rm -rf "$TMP/seg"
done
# The low-res logits written by one run feed --mask-input of the next.
if "$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --point 100,100 --out "$TMP/m1" >/dev/null 2>&1 &&
   head -c $((40 * 40 * 4)) "$TMP/m1/low_res_masks.f32" >"$TMP/mask.f32" &&
   "$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --mask-input "$TMP/mask.f32" --out "$TMP/m2" >/dev/null 2>"$TMP/stderr"; then
  ok "mask-input round trip"
else
  bad "mask-input round trip: $(cat "$TMP/stderr")"
fi
if "$SAMC" info "$CK" --config "$CFG" | grep -q "every key and shape matches"; then ok "info"; else bad "info"; fi

# --- batched boxes: one mask set per box, as predict(box=(B, 4)) ------------------
B1=40,30,200,180 B2=150,100,300,220
if "$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --box $B1 --box $B2 --multimask --out "$TMP/bb" \
     >/dev/null 2>"$TMP/stderr" &&
   "$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --box $B2 --multimask --out "$TMP/bb1" >/dev/null 2>&1 &&
   "$PY" - "$TMP/bb" "$TMP/bb1" <<'PYEOF'
import json, os, sys
import numpy as np
d, one = sys.argv[1:]
r, r1 = json.load(open(f"{d}/result.json")), json.load(open(f"{one}/result.json"))
S = r["low_res_masks"]["shape"][-1]
assert r["low_res_masks"]["shape"] == [2, 3, S, S] and "masks" not in r and "best_mask" not in r, r.keys()
low = np.fromfile(f"{d}/low_res_masks.f32", np.float32).reshape(2, 3, S, S)
assert r["prompt"]["boxes"] == [[40, 30, 200, 180], [150, 100, 300, 220]]
for b, p in enumerate(r["prompts"]):
    ious = [m["predicted_iou"] for m in p["masks"]]
    assert p["best_mask"] == int(np.argmax(ious)) and len(ious) == 3
    assert [m["file"] for m in p["masks"]] == [f"mask_{b}_{k}.png" for k in range(3)]
    assert all(os.path.getsize(f"{d}/mask_{b}_{k}.png") > 0 for k in range(3))
# box 1 of the batch is the single-box run within rounding (one decoder pass for both)
low1 = np.fromfile(f"{one}/low_res_masks.f32", np.float32).reshape(3, S, S)
assert np.abs(low[1] - low1).max() <= 1e-4 * np.abs(low1).max(), np.abs(low[1] - low1).max()
i1 = [m["predicted_iou"] for m in r1["masks"]]
assert np.allclose([m["predicted_iou"] for m in r["prompts"][1]["masks"]], i1, rtol=1e-4, atol=1e-6)
PYEOF
then ok "batched --box: one mask set per box, box 1 as its own run"; else bad "batched --box: $(cat "$TMP/stderr")"; fi

# --- --mask-input: the best mask of a multimask run (result.json beside it), or --mask-index ----
M="$TMP/mm"
"$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --point 100,100 --multimask --out "$M" >/dev/null 2>&1
S=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['low_res_masks']['shape'][-1])" "$M/result.json")
BEST=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['best_mask'])" "$M/result.json")
for k in 0 1 2; do tail -c +$((k * S * S * 4 + 1)) "$M/low_res_masks.f32" | head -c $((S * S * 4)) >"$TMP/mask$k.f32"; done
seg_mask() { "$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" "$@" >/dev/null 2>"$TMP/stderr"; }
if seg_mask --mask-input "$M/low_res_masks.f32" --out "$TMP/mi_best" && seg_mask --mask-input "$TMP/mask$BEST.f32" --out "$TMP/mi_one" &&
   cmp -s "$TMP/mi_best/low_res_masks.f32" "$TMP/mi_one/low_res_masks.f32" &&
   grep -q "\"mask_index\":	$BEST" "$TMP/mi_best/result.json"; then
  ok "--mask-input of a multimask run takes its best mask ($BEST)"
else
  bad "--mask-input best: $(cat "$TMP/stderr")"
fi
K=$(( (BEST + 1) % 3 ))
if seg_mask --mask-input "$M/low_res_masks.f32" --mask-index $K --out "$TMP/mi_k" && seg_mask --mask-input "$TMP/mask$K.f32" --out "$TMP/mi_k1" &&
   cmp -s "$TMP/mi_k/low_res_masks.f32" "$TMP/mi_k1/low_res_masks.f32" && grep -q "\"mask_index\":	$K" "$TMP/mi_k/result.json"; then
  ok "--mask-index $K"
else
  bad "--mask-index: $(cat "$TMP/stderr")"
fi
if seg_mask --box $B1 --box $B2 --mask-input "$TMP/mask0.f32" --out "$TMP/mi_bb"; then ok "batched boxes with one --mask-input"; else bad "batched boxes with --mask-input: $(cat "$TMP/stderr")"; fi
mkdir -p "$TMP/lonely" && cp "$M/low_res_masks.f32" "$TMP/lonely/"
expect_fail mask_no_result "give --mask-index 0..2" segment --model "$CK" --config "$CFG" --image "$IMG" --mask-input "$TMP/lonely/low_res_masks.f32"
expect_fail mask_batched "several prompts" segment --model "$CK" --config "$CFG" --image "$IMG" --mask-input "$TMP/bb/low_res_masks.f32"
expect_fail mask_index_range "holds 3 mask(s)" segment --model "$CK" --config "$CFG" --image "$IMG" --mask-input "$M/low_res_masks.f32" --mask-index 3
expect_fail mask_index_alone "--mask-input FILE, which is not given" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --mask-index 0
expect_fail boxes_with_points "batched boxes take no points" segment --model "$CK" --config "$CFG" --image "$IMG" --box $B1 --box $B2 --point 100,100
expect_fail bad_rle "--rle 'rle'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --rle rle

# --- bad input ---------------------------------------------------------------
printf 'not an image' >"$TMP/garbage.png"
head -c $((10 * 10 * 4)) /dev/zero >"$TMP/small.f32"
expect_fail unknown_config "unknown config 'sam2_hiera_q'" segment --model "$CK" --config sam2_hiera_q --image "$IMG" --point 1,1
expect_fail wrong_config "key '" segment --model "$CK" --config sam2.1_hiera_t --image "$IMG" --point 1,1
expect_fail missing_ckpt "no_such.pt" segment --model "$TMP/no_such.pt" --config "$CFG" --image "$IMG" --point 1,1
expect_fail missing_image "no_such.png" segment --model "$CK" --config "$CFG" --image "$TMP/no_such.png" --point 1,1
expect_fail garbage_image "garbage.png" segment --model "$CK" --config "$CFG" --image "$TMP/garbage.png" --point 1,1
expect_fail point_outside "outside" segment --model "$CK" --config "$CFG" --image "$IMG" --point 400,10
expect_fail point_negative "outside" segment --model "$CK" --config "$CFG" --image "$IMG" --point -1,10
expect_fail point_nan "finite" segment --model "$CK" --config "$CFG" --image "$IMG" --point nan,10
expect_fail point_garbage "X,Y" segment --model "$CK" --config "$CFG" --image "$IMG" --point 10,abc
expect_fail label_range "label 5" segment --model "$CK" --config "$CFG" --image "$IMG" --point 10,10,5
expect_fail box_order "x1 < x0" segment --model "$CK" --config "$CFG" --image "$IMG" --box 100,10,50,60
expect_fail box_short "X0,Y0,X1,Y1" segment --model "$CK" --config "$CFG" --image "$IMG" --box 1,2,3
expect_fail mask_size "40x40" segment --model "$CK" --config "$CFG" --image "$IMG" --mask-input "$TMP/small.f32"
expect_fail no_prompt "no prompt" segment --model "$CK" --config "$CFG" --image "$IMG"
expect_fail unknown_impl "unknown implementation 'gpu'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --impl gpu
# --impl cuda on a machine or build without the plugin or a GPU: a message, never a crash
# (either the plugin is not there, or it is and finds no CUDA device).
SAMC_PLUGIN_PATH="$TMP/nowhere" expect_fail cuda_unavailable "implementation 'cuda'" segment --model "$CK" --config "$CFG" \
  --image "$IMG" --point 1,1 --impl cuda
expect_fail unknown_layer "unknown layer 'image_encoder.trunk.blocks.77'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --impl-override image_encoder.trunk.blocks.77=ref
expect_fail unknown_option "unknown option" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --frobnicate 3

# --- options: getopt_long forms, and one message per mistake -------------------
if "$SAMC" segment -m "$CK" -c "$CFG" -i "$IMG" -p 100,100 --threads=1 --out="$TMP/short" -t1 >/dev/null 2>"$TMP/stderr" &&
   [ -s "$TMP/short/mask_0.png" ]; then
  ok "short options, --opt=value, -tN"
else
  bad "short options: $(cat "$TMP/stderr")"
fi
expect_fail misspelt_option "did you mean '--threads'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --thredas 2
expect_fail misspelt_last "did you mean '--multimask'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --multimsk
expect_fail flag_with_value "'--multimask' takes no value" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --multimask=1
expect_fail stray_argument "unexpected argument 'extra'" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 extra
"$SAMC" segment --model "$CK" --config "$CFG" --image "$IMG" --point 1,1 --out >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
if [ $rc -eq 2 ] && grep -q "option '--out' needs a value: --out DIR" "$TMP/stderr"; then ok "missing value"; else bad "missing value (rc $rc): $(cat "$TMP/stderr")"; fi
"$SAMC" track -m "$CK" -f "$SRC/fixtures/video/tiny_v1_sam21_s128_frames" -o "$TMP/t" -p >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
if [ $rc -eq 2 ] && grep -q "option '--prompt' needs a value" "$TMP/stderr"; then ok "missing value (short)"; else bad "missing value (short) (rc $rc): $(cat "$TMP/stderr")"; fi

# parity on something that is not a dump
"$SAMC" parity "$IMG" >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q "not an HDF5 parity dump" "$TMP/stderr"; then ok "parity on a PNG"; else bad "parity on a PNG (rc $rc): $(cat "$TMP/stderr")"; fi
"$SAMC" parity "$SRC/fixtures/ckpt/tiny_c_f32.pt" --tol -1 >"$TMP/stdout" 2>"$TMP/stderr"; rc=$?
if [ $rc -eq 2 ] && grep -q "\-\-tol" "$TMP/stderr"; then ok "parity bad --tol"; else bad "parity bad --tol (rc $rc)"; fi

# --- video: samc track ----------------------------------------------------------
VD="$SRC/fixtures/video/tiny_v1_sam21_s128.h5"
VF="$SRC/fixtures/video/tiny_v1_sam21_s128_frames"
if "$SAMC" track --model "$VD" --config "$VD" --frames "$VF" --prompt 0:1:point=50,40,1 --prompt 2:2:box=70,20,130,80 \
     --out "$TMP/trk" >"$TMP/stdout" 2>"$TMP/stderr" && [ -s "$TMP/trk/masks/00004_obj2.png" ] &&
   [ -s "$TMP/trk/overlay/00003.png" ] && grep -q '"object_score"' "$TMP/trk/track.json"; then
  ok "track forward, two objects"
else
  bad "track forward: $(cat "$TMP/stderr")"
fi
if "$SAMC" track --model "$VD" --config "$VD" --frames "$VF" --prompt 3:1:point=50,40,1 --reverse --max-frames 1 \
     --out "$TMP/trk_rev" >/dev/null 2>"$TMP/stderr" && [ -s "$TMP/trk_rev/masks/00002_obj1.png" ] &&
   [ ! -e "$TMP/trk_rev/masks/00001_obj1.png" ]; then
  ok "track reverse with --max-frames"
else
  bad "track reverse: $(cat "$TMP/stderr")"
fi
if "$SAMC" track --model "$VD" --config "$VD" --frames "$VF" --prompt 0:1:point=50,40,1 --max-frames 1 --rle uncompressed \
     --out "$TMP/trk_rle" >/dev/null 2>"$TMP/stderr" && grep -q '"rle"' "$TMP/trk_rle/track.json" &&
   ! grep -q '"coco_rle"' "$TMP/trk_rle/track.json" && grep -q '"coco_rle"' "$TMP/trk/track.json"; then
  ok "track --rle uncompressed (coco_rle by default)"
else
  bad "track --rle: $(cat "$TMP/stderr")"
fi
mkdir -p "$TMP/empty" "$TMP/notimg" "$TMP/mixed"
printf 'not a jpeg' >"$TMP/notimg/00000.jpg"
cp "$VF/00000.jpg" "$TMP/mixed/00000.jpg"
cp "$SRC/fixtures/video/tiny_v2_sam20_s128_frames/00001.jpg" "$TMP/mixed/00001.jpg"
expect_fail track_empty_dir "no JPEG frames" track --model "$VD" --config "$VD" --frames "$TMP/empty" --prompt 0:1:point=1,1
expect_fail track_not_image "not a readable image" track --model "$VD" --config "$VD" --frames "$TMP/notimg" --prompt 0:1:point=1,1
expect_fail track_sizes "but the first frame is" track --model "$VD" --config "$VD" --frames "$TMP/mixed" --prompt 0:1:point=1,1
expect_fail track_frame_range "outside the video" track --model "$VD" --config "$VD" --frames "$VF" --prompt 9:1:point=1,1
expect_fail track_no_prompt "no --prompt" track --model "$VD" --config "$VD" --frames "$VF"
expect_fail track_bad_prompt "FRAME:OBJ" track --model "$VD" --config "$VD" --frames "$VF" --prompt 0:point=1,1
expect_fail track_missing_dir "cannot open frames directory" track --model "$VD" --config "$VD" --frames "$TMP/nope" --prompt 0:1:point=1,1

# --- video files: a clip in, the overlay out as a video, palettised masks; a damaged file ----
CLIP="$SRC/fixtures/video/clip_v1.mp4"
if "$SAMC" track --model "$VD" --config "$VD" --frames "$CLIP" --prompt 0:1:point=72,48 --prompt 1:3:point=20,20 \
     --out "$TMP/vtrk" --out-video "$TMP/vtrk/overlay.mp4" --palette-png >"$TMP/stdout" 2>"$TMP/stderr" &&
   [ -s "$TMP/vtrk/overlay/00004.png" ] && [ -s "$TMP/vtrk/palette/00004.png" ] && [ -s "$TMP/vtrk/overlay.mp4" ] &&
   grep -q '"codec":	"h264"' "$TMP/vtrk/track.json"; then
  ok "track a video file (--out-video, --palette-png)"
else
  bad "track a video file: $(cat "$TMP/stderr")"
fi
# the overlay video is itself a video samc reads: 5 frames
if "$SAMC" track --model "$VD" --config "$VD" --frames "$TMP/vtrk/overlay.mp4" --prompt 0:1:point=72,48 \
     --out "$TMP/vtrk2" >"$TMP/stdout" 2>"$TMP/stderr" && [ "$(wc -l <"$TMP/vtrk2/track.jsonl")" = 5 ]; then
  ok "the --out-video file tracks again (5 frames)"
else
  bad "re-reading --out-video: $(cat "$TMP/stderr")"
fi
# cut the (index-first) overlay video: the readable frames are tracked and written, exit 1 names the damage
head -c $(($(stat -c %s "$TMP/vtrk/overlay.mp4") * 2 / 3)) "$TMP/vtrk/overlay.mp4" >"$TMP/cut.mp4"
"$SAMC" track --model "$VD" --config "$VD" --frames "$TMP/cut.mp4" --prompt 0:1:point=72,48 --out "$TMP/vcut" \
  >"$TMP/stdout" 2>"$TMP/stderr"
rc=$?
if [ $rc -eq 1 ] && grep -q "only frames 0\.\." "$TMP/stderr" && [ -s "$TMP/vcut/overlay/00000.png" ]; then
  ok "a truncated video: frames before the damage kept, exit 1 with the reason"
else
  bad "truncated video: rc $rc: $(cat "$TMP/stderr")"
fi
expect_fail track_palette_id "object ids 1..255" track --model "$VD" --config "$VD" --frames "$CLIP" \
  --prompt 0:300:point=1,1 --palette-png
expect_fail track_not_video "cannot open as a video" track --model "$VD" --config "$VD" --frames "$SRC/CMakeLists.txt" \
  --prompt 0:1:point=1,1
expect_fail track_out_video_name "not a video file name" track --model "$VD" --config "$VD" --frames "$CLIP" \
  --prompt 0:1:point=1,1 --out-video "$TMP/x.txt"

summary
