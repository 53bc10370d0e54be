#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The file-writing contract of the command line (docs/hostile_input.md,
# "Files"; issue 23): links planted at output names are replaced, never
# followed; an earlier run's outputs never sit beside a new run's; an
# interrupted run leaves no temporaries (tests/test_tmpfile.c); track.jsonl
# holds whole lines; a
# --out path too long is refused before anything is created; names are
# printed with their control characters escaped.
# usage: cli_files_tests.sh SAMC_BINARY SOURCE_DIR
set -u
SAMC=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
temporaries() { find "$1" -name '.*' -type f 2>/dev/null | wc -l; }

CK="$SRC/fixtures/ckpt/tiny_c_f32.pt"
CFG="$SRC/fixtures/ckpt/tiny_c_f32.config.json"
IMG="$SRC/fixtures/demo/demo.png"
VD="$SRC/fixtures/video/tiny_v1_sam21_s128.h5"
VF="$SRC/fixtures/video/tiny_v1_sam21_s128_frames"
SEG=(segment --model "$CK" --config "$CFG" --image "$IMG" --point 100,90)

# 1. a symlink planted at an output name is replaced, its target untouched
mkdir -p "$TMP/link"
echo precious >"$TMP/victim"
ln -s "$TMP/victim" "$TMP/link/result.json"
if "$SAMC" "${SEG[@]}" --out "$TMP/link" >/dev/null 2>"$TMP/err" && [ "$(cat "$TMP/victim")" = precious ] &&
  [ -f "$TMP/link/result.json" ] && [ ! -L "$TMP/link/result.json" ]; then
  ok "planted symlink replaced, not followed"
else bad "planted symlink: $(cat "$TMP/err")"; fi

# 2. segment without --multimask after a run with it: the old mask_1/2 go
if "$SAMC" "${SEG[@]}" --multimask --out "$TMP/stale" >/dev/null 2>"$TMP/err" && [ -f "$TMP/stale/mask_2.png" ] &&
  "$SAMC" "${SEG[@]}" --out "$TMP/stale" >/dev/null 2>>"$TMP/err" && [ -f "$TMP/stale/mask_0.png" ] &&
  [ ! -e "$TMP/stale/mask_1.png" ] && [ ! -e "$TMP/stale/mask_2.png" ] && [ ! -e "$TMP/stale/overlay_2.png" ]; then
  ok "segment: an earlier run's extra masks removed"
else bad "segment stale outputs: $(ls "$TMP/stale") $(cat "$TMP/err")"; fi

# 3. track into a directory of an earlier run: its summary, lines and masks go first
mkdir -p "$TMP/track/masks" "$TMP/track/overlay"
echo '{"stale": true}' >"$TMP/track/track.json"
touch "$TMP/track/masks/99999_obj1.png" "$TMP/track/overlay/99999.png"
if "$SAMC" track --model "$VD" --config "$VD" --frames "$VF" --prompt 0:1:point=50,40 --max-frames 1 \
  --out "$TMP/track" >/dev/null 2>"$TMP/err" && [ ! -e "$TMP/track/masks/99999_obj1.png" ] &&
  [ ! -e "$TMP/track/overlay/99999.png" ] && ! grep -q stale "$TMP/track/track.json" &&
  [ "$(tail -c1 "$TMP/track/track.jsonl" | od -An -c | tr -d ' ')" = '\n' ]; then
  ok "track: the previous run's outputs removed before the new run"
else bad "track re-run: $(ls -R "$TMP/track") $(cat "$TMP/err")"; fi

# 4. track.jsonl whole lines when writes fail (file size limit: EFBIG)
mkdir -p "$TMP/fsize"
(trap '' XFSZ; ulimit -f 24; "$SAMC" track --model "$VD" --config "$VD" --frames "$VF" --prompt 0:1:point=50,40 \
  --out "$TMP/fsize" >/dev/null 2>"$TMP/err")
j="$TMP/fsize/track.jsonl"
if [ ! -s "$j" ] || [ "$(tail -c1 "$j" | od -An -c | tr -d ' ')" = '\n' ]; then
  ok "track.jsonl ends with a whole line after failed writes"
else bad "track.jsonl half-written: $(tail -c 80 "$j")"; fi

# 5. (temporaries removed on a signal: tests/test_tmpfile.c, deterministic)

# 6. --out longer than the system allows: refused, nothing created
long="$TMP/long"
for _ in $(seq 40); do long="$long/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; done
"$SAMC" "${SEG[@]}" --out "$long" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -ge 1 ] && [ $rc -le 2 ] && grep -q "too long" "$TMP/err" && [ ! -e "$TMP/long" ]; then
  ok "--out past PATH_MAX refused before anything is created"
else bad "long --out (rc $rc): $(cat "$TMP/err" | head -c 300); exists: $(ls -d "$TMP/long" 2>/dev/null)"; fi

# 7. control characters in a file name are escaped in messages
bad_name="$TMP/$(printf 'x\033[2J\nFORGED').png"
printf 'junk' >"$bad_name"
"$SAMC" segment --model "$CK" --config "$CFG" --image "$bad_name" --point 1,1 --out "$TMP/esc" >/dev/null 2>"$TMP/err"
if grep -q 'x\\x1b\[2J\\x0aFORGED' "$TMP/err" && ! grep -q "$(printf '\033')" "$TMP/err" && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then
  ok "control characters of a name escaped in the message"
else bad "escape: $(od -c "$TMP/err" | head -5)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
