#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The loopback load test of samc serve (tests/serve_load.c) on the bundled
# demo model: 8 clients x 40 prompts on 2 workers, every reply checked
# against the prompt's reference, latency percentiles printed, resident
# memory flat after a warm-up pass. Bounded: at most 120 s of requests.
# usage: serve_load_test.sh SAMC_BINARY SERVE_LOAD_BINARY SOURCE_DIR [MAX_GROWTH_MB]
set -u
SAMC=$1
LOAD=$2
SRC=$3
GROWTH=${4:-16}
TMP=$(mktemp -d)
"$SAMC" serve --port 0 --port-file "$TMP/port" --workers 2 --threads 1 --queue 64 \
  2>"$TMP/server.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 300); do [ -s "$TMP/port" ] && break; sleep 0.1; done
[ -s "$TMP/port" ] || { echo "FAIL samc serve did not start: $(cat "$TMP/server.log")"; exit 1; }
"$LOAD" --port "$(cat "$TMP/port")" --image "$SRC/fixtures/demo/demo.png" --clients 8 --requests 40 --prompts 12 \
  --max-growth-mb "$GROWTH" --seconds 120
