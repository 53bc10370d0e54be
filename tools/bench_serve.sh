#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Click-to-mask latency through samc serve against the in-process time
# (docs/benchmarks.md, "samc serve"): a real-size model (sam2.1_hiera_t at
# 1024, seeded random weights unless CKPT is given), one worker with THREADS
# threads, an uploaded 1024 x 768 image whose embedding is cached, then
# REQUESTS sequential one-point prompts (multimask, three masks in COCO RLE)
# from one keep-alive client. Reported: the client's latency, the worker's
# own predict time of the same requests (timing_ms.compute: the in-process
# time, measured in the same run), their difference (the server's overhead:
# HTTP, JSON, queue hand-off, RLE of the masks), and `samc bench`'s
# prompt -> masks time for the same model and threads.
#
#   tools/bench_serve.sh [BUILD_DIR]          (default build/)
# Environment: CKPT (a .pt; default: /tmp/samc_bench_t1024.pt, made with
# tools/make_checkpoint.py from the official code at SAM2_SRC), THREADS (2),
# REQUESTS (200), PROMPTS (20).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
THREADS=${THREADS:-2}
REQUESTS=${REQUESTS:-200}
PROMPTS=${PROMPTS:-20}
TMP=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
SERVER=
if [ -z "${CKPT:-}" ]; then
  CKPT=/tmp/samc_bench_t1024.pt
  if [ ! -s "$CKPT" ]; then
    : "${SAM2_SRC:?set SAM2_SRC to the official sam2 checkout (or CKPT to a checkpoint)}"
    /usr/bin/python3 "$SRC/tools/make_checkpoint.py" --config sam2.1_hiera_t --seed 3 --out-dir /tmp \
      --name samc_bench_t1024 --formats pt,config >/dev/null
  fi
fi
/usr/bin/python3 "$SRC/tools/synth_image.py" --size 768x1024 --seed 7 --out "$TMP/photo.png"
echo "== in process: samc bench (prompt -> masks, 1 point, multimask), $THREADS threads"
OMP_NUM_THREADS=$THREADS "$BUILD/samc" bench --model "$CKPT" --threads "$THREADS" --image 1024x768 --runs 20 \
  --prompts 50 2>&1 | grep -Ei "model|prompt|predict|blas" || true
echo "== through samc serve: 1 worker x $THREADS threads, one client, $REQUESTS requests"
OMP_NUM_THREADS=$THREADS "$BUILD/samc" serve --model "$CKPT" --port 0 --port-file "$TMP/port" --workers 1 \
  --threads "$THREADS" 2>"$TMP/server.log" &
SERVER=$!
for _ in $(seq 600); do [ -s "$TMP/port" ] && break; sleep 0.1; done
"$BUILD/tests/serve_load" --port "$(cat "$TMP/port")" --image "$TMP/photo.png" --clients 1 --requests "$REQUESTS" \
  --prompts "$PROMPTS" --max-growth-mb 64 --seconds 900 --json "$TMP/result.json"
cat "$TMP/result.json"
