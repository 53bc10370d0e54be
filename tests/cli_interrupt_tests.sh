#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Ctrl-C (SIGINT) and SIGTERM during `samc track`, `samc amg` and `samc
# segment`: each stops at the next layer or frame boundary, says
# "interrupted", exits 128 + the signal (130 for SIGINT), and leaves only
# complete outputs (track: the finished frames' files and a track.json with
# "interrupted": true and exactly those frames; amg and segment: nothing, no
# temporaries). The signal is sent once the command has reported progress,
# so it always lands mid-run.
# usage: cli_interrupt_tests.sh SAMC_BINARY SOURCE_DIR
. "$(dirname "$0")/cli_lib.sh" "$@"

# run_until NAME PATTERN SIGNAL ARGS...: start samc, send SIGNAL once stderr
# matches PATTERN (30 s at most), wait; sets RC and leaves stderr in $TMP/NAME.err
run_until() {
  local name=$1 pattern=$2 sig=$3
  shift 3
  "$SAMC" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  local pid=$! waited=0
  until grep -q -- "$pattern" "$TMP/$name.err" 2>/dev/null || ! kill -0 "$pid" 2>/dev/null || [ $waited -ge 300 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -s "$sig" "$pid" 2>/dev/null
  wait "$pid"
  RC=$?
}

no_temporaries() { ! find "$1" -name '.*.tmp*' 2>/dev/null | grep -q .; }

# --- track: 120 frames (the fixture's frames repeated), interrupted after the first
CK="$SRC/fixtures/ckpt/tiny_c_f32.pt"
CFG="$SRC/fixtures/ckpt/tiny_c_f32.config.json"
VF="$SRC/fixtures/video/tiny_v1_sam21_s128_frames"
mkdir -p "$TMP/frames"
for i in $(seq 0 119); do cp "$VF/0000$((i % 5)).jpg" "$TMP/frames/$(printf %05d "$i").jpg"; done
for sig in INT TERM; do
  out="$TMP/trk_$sig"
  run_until "track_$sig" "tracking" "$sig" track -m "$CK" -c "$CFG" -f "$TMP/frames" -p 0:1:point=50,40 -o "$out" -t 1 -v
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  done_frames=""
  if grep -q -E '"interrupted":[[:space:]]*true' "$out/track.json" 2>/dev/null; then
    done_frames=$(sed -n -E 's/.*"frames_tracked":[[:space:]]*([0-9]+).*/\1/p' "$out/track.json")
    [ "$(grep -c '"seconds":' "$out/track.json")" -eq "${done_frames:--1}" ] || done_frames="" # one per frame done
  fi
  overlays=$(ls "$out/overlay" 2>/dev/null | wc -l)
  lines=$(wc -l <"$out/track.jsonl" 2>/dev/null || echo -1)
  if [ "$RC" -eq "$want" ] && grep -q "interrupted" "$TMP/track_$sig.err" && [ -n "$done_frames" ] &&
     [ "$done_frames" -ge 1 ] && [ "$done_frames" -lt 120 ] && [ "$overlays" -eq "$done_frames" ] &&
     [ "$lines" -eq "$done_frames" ] && no_temporaries "$out"; then
    ok "track SIG$sig: exit $RC, $done_frames whole frame(s) and track.json kept"
  else
    bad "track SIG$sig: rc $RC (want $want), frames '$done_frames', overlays $overlays, jsonl $lines: $(tail -2 "$TMP/track_$sig.err")"
  fi
done

# --- amg: the demo with crops and a dense grid, interrupted after the first batch
out="$TMP/amg"
run_until amg "crop" INT amg -o "$out" --points-per-side 32 --crop-n-layers 1 --pred-iou-thresh 0 \
  --stability-score-thresh 0.5 -t 1
if [ "$RC" -eq 130 ] && grep -q "interrupted" "$TMP/amg.err" && [ ! -e "$out/masks.json" ] &&
   [ ! -e "$out/overlay.png" ] && no_temporaries "$out"; then
  ok "amg SIGINT: exit 130, nothing written"
else
  bad "amg SIGINT: rc $RC: $(tail -2 "$TMP/amg.err")"
fi

# --- segment: the scalar reference at 960 x 960 (seconds), signalled once the
# predictor exists (its log line), so during or before the encoder
out="$TMP/seg"
sed 's/"image_size": *160/"image_size": 960/' "$CFG" >"$TMP/big.config.json"
run_until segment "predictor: impl" INT segment -m "$CK" -c "$TMP/big.config.json" -i "$SRC/fixtures/demo/demo.png" \
  -p 100,90 -o "$out" --impl ref -v
if [ "$RC" -eq 130 ] && grep -q "interrupted" "$TMP/segment.err" && [ ! -e "$out/result.json" ] &&
   [ ! -e "$out/mask_0.png" ] && no_temporaries "$out"; then
  ok "segment SIGINT: exit 130, nothing written"
else
  bad "segment SIGINT: rc $RC: $(tail -2 "$TMP/segment.err")"
fi

summary
