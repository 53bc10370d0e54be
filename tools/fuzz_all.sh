#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run every libFuzzer harness of fuzz/ for SECONDS each, one after the other
# (one process, one core), seeded from fuzz/seeds/ and the fixtures.
#
#   tools/fuzz_all.sh SECONDS [HARNESS ...]     (default: all harnesses)
#
# Environment:
#   BUILD   fuzz build directory (default: build-fuzz); configured and built
#           here with clang when it has no fuzz_* binaries yet
#   OUT     corpora, crash artefacts and logs (default: $BUILD/fuzz-out); the
#           corpus of each harness is kept between runs
#   FUZZ_ARGS  extra libFuzzer arguments
# Prints one line per harness (executions, corpus size, findings) and exits
# non-zero when any harness found a crash, leak or timeout; the reproducer is
# in $OUT/artifacts/<harness>/ (replay it with $BUILD/fuzz/fuzz_<harness> FILE).
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:?usage: tools/fuzz_all.sh SECONDS [HARNESS ...]}
shift
ALL="pickle pt safetensors h5dump config_json sam3_config image cli_args frames_dir tokenizer tokenizer_vocab serve_request video_file"
HARNESSES=${*:-$ALL}
BUILD=${BUILD:-$SRC/build-fuzz}
OUT=${OUT:-$BUILD/fuzz-out}

if [ ! -x "$BUILD/fuzz/fuzz_pickle" ]; then
  CC=clang cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAMC_FUZZ=ON -DSAMC_BUILD_TESTS=OFF >/dev/null || exit 1
  cmake --build "$BUILD" --target fuzz -j"$(nproc)" >/dev/null || exit 1
fi

# Seeds: the committed ones plus what the fixtures give (data.pkl of every
# checkpoint for the pickle interpreter, the config JSON files, demo image).
SEEDS=$OUT/seeds
rm -rf "$SEEDS"
mkdir -p "$OUT"
cp -r "$SRC/fuzz/seeds" "$SEEDS"
for pt in "$SRC"/fixtures/ckpt/*.pt "$SRC"/fixtures/demo/*.pt; do
  name=$(unzip -Z1 "$pt" 2>/dev/null | grep '/data.pkl$' | head -1)
  [ -n "$name" ] && unzip -p "$pt" "$name" >"$SEEDS/pickle/fixture_$(basename "$pt" .pt).pkl"
done
cp "$SRC"/fixtures/ckpt/*.config.json "$SRC"/fixtures/demo/*.config.json "$SEEDS/config_json/" 2>/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$SRC/fuzz/lsan.supp}
status=0
for h in $HARNESSES; do
  bin=$BUILD/fuzz/fuzz_$h
  [ -x "$bin" ] || { echo "fuzz_all: no $bin"; status=1; continue; }
  corpus=$OUT/corpus/$h
  art=$OUT/artifacts/$h
  mkdir -p "$corpus" "$art"
  extra=()
  case $h in
    pickle) extra=(-dict="$SRC/fuzz/pickle.dict" -max_len=65536) ;;
    pt) extra=(-dict="$SRC/fuzz/pickle.dict" -max_len=16384) ;;
    safetensors | config_json) extra=(-dict="$SRC/fuzz/json.dict" -max_len=8192) ;;
    sam3_config) extra=(-dict="$SRC/fuzz/json.dict" -max_len=16384) ;;
    # libhdf5 is not hardened and hangs or crashes on some corrupt files
    # (docs/hostile_input.md): run in fork mode so such a finding does not end
    # the run; each artefact is classified below.
    h5dump) extra=(-max_len=32768 -timeout=3 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) ;;
    image) extra=(-max_len=16384) ;;
    cli_args) extra=(-max_len=1024) ;;
    frames_dir) extra=(-max_len=16384) ;;
    tokenizer) extra=(-max_len=4096) ;;
    tokenizer_vocab) extra=(-max_len=4096) ;;
    serve_request) extra=(-dict="$SRC/fuzz/json.dict" -max_len=4096) ;;
    video_file) extra=(-max_len=65536) ;;
  esac
  log=$OUT/$h.log
  stamp=$OUT/.stamp_$h
  touch "$stamp"
  t0=$(date +%s)
  # -rss_limit_mb/-malloc_limit_mb: a single allocation over 2 GiB is a
  # finding (inputs of a few KiB must not make samc allocate that much).
  "$bin" "$corpus" "$SEEDS/$h" -max_total_time="$SECS" -print_final_stats=1 -timeout=20 \
    -rss_limit_mb=3072 -malloc_limit_mb=2048 -artifact_prefix="$art/" "${extra[@]}" ${FUZZ_ARGS:-} >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$')
  [ -n "$execs" ] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#') # fork mode
  # An artefact whose first frame outside the sanitizer, libFuzzer and libc
  # is in libhdf5 is a finding about the HDF5 library, kept apart in
  # $art/hdf5_library/ (reported, not a samc failure).
  lib=0
  for a in "$art"/crash-* "$art"/timeout-* "$art"/oom-* "$art"/leak-*; do
    [ "$a" -nt "$stamp" ] || continue
    frame=$(timeout 120 "$bin" -timeout=10 -rss_limit_mb=3072 "$a" 2>&1 |
      grep -E '^ +#[0-9]+ ' | grep -vE '__sanitizer|fuzzer::|libc\.so|__interceptor|asan|ubsan|__libc|libFuzzer|_start' | head -1)
    if echo "$frame" | grep -q libhdf5; then
      mkdir -p "$art/hdf5_library"
      mv "$a" "$art/hdf5_library/"
      lib=$((lib + 1))
    fi
  done
  found=$(find "$art" -maxdepth 1 -type f -newer "$stamp" | wc -l)
  [ "$lib" -eq 0 ] || echo "$h: $lib finding(s) inside libhdf5 moved to $art/hdf5_library/"
  printf '%-12s %10s execs in %ss, corpus %s files, %s new finding(s), exit %s\n' "$h" "${execs:-?}" "$(($(date +%s) - t0))" \
    "$(ls "$corpus" | wc -l)" "$found" "$rc"
  if { [ "$rc" -ne 0 ] && [ "$found" -ne 0 ]; } || [ "$found" -ne 0 ] || { [ "$rc" -ne 0 ] && [ "$lib" -eq 0 ]; }; then
    status=1
    grep -m3 -E 'ERROR|runtime error|fuzz invariant' "$log" | sed 's/^/    /'
  fi
done
exit $status
