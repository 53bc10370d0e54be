#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# samc serve's JSON API over HTTP (docs/serve.md), with curl: every route on
# the bundled tiny models, then hostile requests, each answered with the
# right status and a message naming the problem, and the server still up.
# usage: serve_tests.sh SAMC_BINARY SOURCE_DIR
set -u
SAMC=$1
SRC=$2
TMP=$(mktemp -d)
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

"$SAMC" serve --port 0 --port-file "$TMP/port" --workers 2 --threads 1 --max-upload-mb 1 --max-image-mp 1 \
  --max-video-mb 2 --max-videos 2 --model "$SRC/fixtures/video/tiny_v1_sam21_s128.h5" 2>"$TMP/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.1; done
BASE="http://127.0.0.1:$(cat "$TMP/port")"

# req NAME WANT_STATUS WANT_SUBSTRING CURL_ARGS... : the status and the body's message.
req() {
  local name=$1 want=$2 sub=$3
  shift 3
  local code
  code=$(curl -s -o "$TMP/body" -w '%{http_code}' "$@")
  if [ "$code" != "$want" ]; then bad "$name: status $code, expected $want: $(head -c 300 "$TMP/body")"; return 1; fi
  if [ -n "$sub" ] && ! grep -qF -- "$sub" "$TMP/body"; then bad "$name: body lacks '$sub': $(head -c 300 "$TMP/body")"; return 1; fi
  ok "$name"
}
json() { python3 -c "import json,sys; d=json.load(open('$TMP/body')); print($1)"; }

# --- the routes ---------------------------------------------------------------------
req health 200 '"status":"ok"' "$BASE/health"
req models 200 '"family":"SAM 2"' "$BASE/v1/models"
req page 200 '<canvas id="image-canvas"' "$BASE/"
req page_script 200 'rleDecode' "$BASE/web/masks.js"
req upload 201 '"embedded":{"sam2":true' -X POST --data-binary @"$SRC/fixtures/demo/demo.png" "$BASE/v1/images"
ID=$(json "d['id']")
req upload_multipart 201 '"width":320' -F "image=@$SRC/fixtures/demo/demo.png" "$BASE/v1/images"
req image 200 "\"id\":\"$ID\"" "$BASE/v1/images/$ID"
req predict 200 '"best"' -X POST -d '{"points":[[100,90]]}' "$BASE/v1/images/$ID/predict"
[ "$(json "len(d['masks'])")" = 3 ] && [ "$(json "d['cache']")" = hit ] && ok "predict: three candidates, cached embedding" ||
  bad "predict: $(head -c 300 "$TMP/body")"
PRED=$(json "d['prediction']")
req predict_png 200 '"png":"iVBORw0KGgo' -X POST -d "{\"points\":[[100,90],[20,30,0]],\"mask_input\":{\"prediction\":$PRED,\"index\":1},\"png\":true}" "$BASE/v1/images/$ID/predict"
req predict_box 200 '"rle"' -X POST -d '{"box":[10,20,200,150],"multimask":true}' "$BASE/v1/images/$ID/predict"
req everything 200 '"masks":[' -X POST -d '{"points_per_side":4,"pred_iou_thresh":0,"stability_score_thresh":0}' "$BASE/v1/images/$ID/everything"
req concepts_no_sam3 400 'needs a SAM 3 model' -X POST -d '{"text":"a dog"}' "$BASE/v1/images/$ID/concepts"
req metrics 200 'samc_http_requests_total{route="predict",code="200"}' "$BASE/metrics"
req metrics_json 200 '"hits":' "$BASE/metrics?format=json"
req delete_image 204 '' -X DELETE "$BASE/v1/images/$ID"
req deleted_image 404 'unknown image id' -X POST -d '{"points":[[1,1]]}' "$BASE/v1/images/$ID/predict"

# --- a video session -------------------------------------------------------------------
req video 201 '"frames":5' -X POST --data-binary @"$SRC/fixtures/video/clip_v1.mp4" "$BASE/v1/videos"
VID=$(json "d['id']")
req video_prompt 200 '"obj_id":1' -X POST -d '{"frame":0,"obj_id":1,"points":[[72,48]]}' "$BASE/v1/videos/$VID/prompts"
curl -s -N -X POST -d '{}' "$BASE/v1/videos/$VID/propagate" >"$TMP/events"
[ "$(grep -c '^event: frame' "$TMP/events")" = 5 ] && grep -q '^event: done' "$TMP/events" &&
  ok "propagate: five frame events, then done" || bad "propagate: $(head -c 400 "$TMP/events")"
req video_masks 200 '"counts"' "$BASE/v1/videos/$VID/masks/4"
req video_frame 200 '' "$BASE/v1/videos/$VID/frames/2"
head -c 4 "$TMP/body" | grep -q PNG && ok "video frame is a PNG" || bad "video frame is not a PNG"
req video_state 200 '"frames_with_masks":5' "$BASE/v1/videos/$VID"
req video_frame_range 404 'outside the video' "$BASE/v1/videos/$VID/frames/9"
req video_prompt_range 400 'frame' -X POST -d '{"frame":7,"obj_id":1,"points":[[1,1]]}' "$BASE/v1/videos/$VID/prompts"
req video_prompt_outside 400 'is outside the 144x96 image' -X POST -d '{"frame":0,"obj_id":1,"points":[[500,1]]}' "$BASE/v1/videos/$VID/prompts"
req video_reset 200 '"frames_with_masks":0' -X POST "$BASE/v1/videos/$VID/reset"
req video_delete 204 '' -X DELETE "$BASE/v1/videos/$VID"
req video_deleted 404 'unknown video id' "$BASE/v1/videos/$VID"
FR="$SRC/fixtures/video/tiny_v1_sam21_s128_frames"
req video_frames_upload 201 '"frames":5' $(for i in 0 1 2 3 4; do echo "-F f$i=@$FR/0000$i.jpg"; done) "$BASE/v1/videos"
req video_frames_sizes 400 'frame 1 of the upload is 320x240 but frame 0 is 144x96' -F "a=@$FR/00000.jpg" \
  -F "b=@$SRC/fixtures/demo/demo.png" "$BASE/v1/videos"
req video_garbage 400 'cannot open as a video' -X POST --data-binary @"$SRC/CMakeLists.txt" "$BASE/v1/videos"
head -c 2500 "$SRC/fixtures/video/clip_v1.mp4" >"$TMP/cut.mp4"
req video_truncated 400 'video' -X POST --data-binary @"$TMP/cut.mp4" "$BASE/v1/videos"

# --- hostile requests -------------------------------------------------------------------
req upload "201" '' -X POST --data-binary @"$SRC/fixtures/demo/demo.png" "$BASE/v1/images"
ID=$(json "d['id']")
req bad_json 400 'not valid JSON' -X POST -d '{"points":[[1,2]' "$BASE/v1/images/$ID/predict"
req not_object 400 'must be a JSON object' -X POST -d '[1,2]' "$BASE/v1/images/$ID/predict"
req unknown_field 400 "unknown field 'point'" -X POST -d '{"point":[1,2]}' "$BASE/v1/images/$ID/predict"
req repeated_field 400 'given twice' -X POST -d '{"box":[1,1,9,9],"box":[1,1,9,9]}' "$BASE/v1/images/$ID/predict"
req trailing_data 400 'data after its JSON value' -X POST -d '{"box":[1,1,9,9]} x' "$BASE/v1/images/$ID/predict"
req point_outside 400 'point 0 (400,10) is outside the 320x240 image' -X POST -d '{"points":[[400,10]]}' "$BASE/v1/images/$ID/predict"
req point_nan 400 'not a finite number' -X POST -d '{"points":[[1e999,10]]}' "$BASE/v1/images/$ID/predict"
req bad_label 400 'label 7 outside -1..3' -X POST -d '{"points":[[1,10,7]]}' "$BASE/v1/images/$ID/predict"
req box_reversed 400 'has x1 < x0' -X POST -d '{"box":[100,10,5,50]}' "$BASE/v1/images/$ID/predict"
req no_prompt 400 'no prompt' -X POST -d '{}' "$BASE/v1/images/$ID/predict"
req too_many_points 400 'at most 64' -X POST -d "{\"points\":[$(printf '[1,1],%.0s' $(seq 70))[1,1]]}" "$BASE/v1/images/$ID/predict"
req stale_mask_input 404 'not kept' -X POST -d '{"mask_input":{"prediction":9999}}' "$BASE/v1/images/$ID/predict"
req amg_too_big 400 'points_per_side' -X POST -d '{"points_per_side":4096}' "$BASE/v1/images/$ID/everything"
req unknown_image 404 'unknown image id' -X POST -d '{"box":[1,1,5,5]}' "$BASE/v1/images/0123456789abcdef0123456789abcdef/predict"
req malformed_id 404 'no such resource' "$BASE/v1/images/../../etc/passwd" --path-as-is
req traversal 404 '' --path-as-is "$BASE/web/../CMakeLists.txt"
req traversal_encoded 404 '' "$BASE/web/%2e%2e%2fCMakeLists.txt"
req hidden_file 404 '' "$BASE/web/.gitignore"
req no_such_page_file 404 'no such file' "$BASE/web/nope.js"
req wrong_method 405 'takes POST' -X GET "$BASE/v1/images/$ID/predict"
curl -s -D "$TMP/headers" -o /dev/null -X PUT "$BASE/v1/images"
grep -qi '^Allow: POST' "$TMP/headers" && ok "405 names the allowed methods" || bad "405 without Allow: $(cat "$TMP/headers")"
head -c 2000000 /dev/zero >"$TMP/big"
req declared_too_large 413 'at most 1048576' -X POST --data-binary @"$TMP/big" "$BASE/v1/images"
# a chunked body past the limit cannot be answered before it ends: the connection is closed
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Transfer-Encoding: chunked' --data-binary @- "$BASE/v1/images" <"$TMP/big")
[ "$code" = 000 ] || [ "$code" = 100 ] && ok "chunked body past the limit: connection closed" || bad "chunked: status $code"
req json_too_large 413 '' -X POST -H 'Content-Type: application/json' --data-binary @"$TMP/big" "$BASE/v1/images/$ID/predict"
req not_an_image 400 'not a readable image' -X POST --data-binary @"$SRC/CMakeLists.txt" "$BASE/v1/images"
req empty_upload 400 'no image' -X POST "$BASE/v1/images"
python3 - "$TMP" <<'EOF'
import struct, sys, zlib
def png(w, h, rows):
    def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
open(sys.argv[1] + "/wide.png", "wb").write(png(1500, 1000, b"\0" * (1501 * 1000)))   # 1.5 MP, small file
open(sys.argv[1] + "/huge.png", "wb").write(png(20000, 10, b""))                      # a side too long (the header is read alone)
EOF
req too_many_pixels 413 'at most 1000000' -X POST --data-binary @"$TMP/wide.png" "$BASE/v1/images"
req huge_header 400 'at most 16384 pixels a side' -X POST --data-binary @"$TMP/huge.png" "$BASE/v1/images"
req bad_multipart 400 'no file part' -X POST -F 'note=hello' "$BASE/v1/images"
req video_too_large 413 '' -X POST --data-binary @"$TMP/big" -H 'Content-Length: 99999999' "$BASE/v1/videos"
req still_up 200 '"status":"ok"' "$BASE/health"
kill -TERM $SERVER
wait $SERVER
rc=$?
[ $rc -eq 0 ] && grep -q 'stopping' "$TMP/server.log" && ok "SIGTERM stops the server (exit 0)" || bad "stop: rc $rc: $(tail -3 "$TMP/server.log")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
