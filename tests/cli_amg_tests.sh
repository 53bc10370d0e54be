#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CLI behaviour of `samc amg`: runs on the bundled demo model (the records as
# JSON with the official keys, the overlay, progress on stderr; with
# binary_mask one PNG per record) and the bad inputs of issue 14, each with
# exit 2 (usage / parameter) or 1 (runtime), a message naming the problem and
# no output written.
# usage: cli_amg_tests.sh SAMC_BINARY SOURCE_DIR
. "$(dirname "$0")/cli_lib.sh" "$@"

# expect_rc NAME RC EXPECTED_SUBSTRING ARGS...
expect_rc() {
  local name=$1 want_rc=$2 want=$3
  shift 3
  local out="$TMP/out_$name"
  "$SAMC" amg "$@" --out "$out" >"$TMP/stdout" 2>"$TMP/stderr"
  local rc=$?
  if [ $rc -ne "$want_rc" ]; then bad "$name: exit $rc, expected $want_rc: $(cat "$TMP/stderr")"; return; fi
  if ! grep -q -- "$want" "$TMP/stderr"; then bad "$name: message lacks '$want': $(cat "$TMP/stderr")"; return; fi
  if [ -e "$out/masks.json" ] || [ -e "$out/overlay.png" ]; then bad "$name: wrote outputs"; return; fi
  ok "$name"
}

# --- success on the bundled demo -------------------------------------------------
D="$TMP/demo"
if "$SAMC" amg --out "$D" --points-per-side 8 --pred-iou-thresh 0 --stability-score-thresh 0.5 \
     >"$TMP/stdout" 2>"$TMP/stderr" && [ -s "$D/overlay.png" ] && grep -q "crop 1/1, 64/64 points" "$TMP/stderr" &&
   "$PY" - "$D/masks.json" <<'PYEOF'
import json, sys
recs = json.load(open(sys.argv[1]))
assert len(recs) >= 1, "no records"
for r in recs:
    assert set(r) == {"segmentation", "area", "bbox", "predicted_iou", "point_coords", "stability_score", "crop_box"}, r.keys()
    assert isinstance(r["segmentation"]["counts"], str) and r["segmentation"]["size"] == [240, 320]
    assert r["crop_box"] == [0, 0, 320, 240] and r["stability_score"] >= 0.5
PYEOF
then ok "demo amg (coco_rle records, overlay, progress)"; else bad "demo amg: $(cat "$TMP/stderr")"; fi

D="$TMP/demo_bin"
if "$SAMC" amg --out "$D" --points-per-side 4 --pred-iou-thresh 0 --stability-score-thresh 0 --crop-n-layers 1 \
     --output-mode binary_mask --impl ref --quiet >"$TMP/stdout" 2>"$TMP/stderr" && [ ! -s "$TMP/stderr" ] &&
   "$PY" - "$D" <<'PYEOF'
import json, os, sys
recs = json.load(open(os.path.join(sys.argv[1], "masks.json")))
assert len(recs) >= 1
assert all(isinstance(r["segmentation"]["counts"], list) for r in recs)
assert all(sum(r["segmentation"]["counts"]) == 240 * 320 for r in recs)
pngs = [f for f in os.listdir(sys.argv[1]) if f.startswith("mask_") and f.endswith(".png")]
assert len(pngs) == len(recs), (len(pngs), len(recs))
PYEOF
then ok "demo amg binary_mask with crops"; else bad "demo amg binary_mask: $(cat "$TMP/stderr")"; fi

if "$SAMC" amg --help | grep -q -- "--points-per-side"; then ok "--help"; else bad "--help"; fi

# --- bad input ---------------------------------------------------------------------
expect_rc pps0 2 "points_per_side" --points-per-side 0
expect_rc pps_huge 2 "points_per_side is 100000" --points-per-side 100000
expect_rc iou_thresh 2 "pred_iou_thresh is 1.5" --pred-iou-thresh 1.5
expect_rc stab_thresh 2 "stability_score_thresh is -0.5" --stability-score-thresh -0.5
expect_rc nms_nan 2 "expected a finite number" --box-nms-thresh nan
expect_rc crop_layers 2 "too many for a 240x320 image" --crop-n-layers 8 --points-per-side 1
expect_rc output_mode 2 "output_mode 'png'" --output-mode png
expect_rc unknown 2 "unknown option '--bogus'" --bogus 1
expect_rc model_alone 2 "give --model and --image together" --model "$SRC/fixtures/demo/tiny_d_demo.pt"
expect_rc no_model 1 "cannot open" --model "$TMP/none.pt" --image "$SRC/fixtures/demo/demo.png"
expect_rc no_image 1 "none.png" --model "$SRC/fixtures/demo/tiny_d_demo.pt" --image "$TMP/none.png"
summary
