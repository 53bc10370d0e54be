#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench_device.sh - samc (fast, bf16) against current PyTorch (fp32, bf16
# autocast) on another machine, both sides timed in one run, interleaved.
#
# Two steps, because the machine that measures may have neither a compiler
# for samc nor its libraries (the lent machine of issue 12: PyTorch 2.x,
# nothing installable):
#
#   tools/bench_device.sh pack [DIR]      here: build samc twice, the
#       portable build (the default: x86-64-v2 baseline, the kernels' level
#       and the bf16 kernel picked by CPUID at run time: AMX tiles,
#       AVX512_BF16, or the fallback) and the same sources with everything
#       compiled for the lent machine's CPU ($DEVICE_MARCH, default
#       sapphirerapids: what -march=native gives there), bundle the binaries
#       with every shared library they load (and the dynamic loader, so the
#       target's glibc does not matter) and the official sam2 sources
#       ($SAM2_SRC, the python package and its configs only) into DIR
#       (default .devbench, ~30 MB compressed). DIR must be ignored by git
#       (.git/info/exclude).
#   tools/bench_device.sh run [DIR] [WHAT]  there: unpack to /tmp, print the
#       CPU and the bf16 kernel, check the bf16 kernels on that CPU
#       (test_gemm_kernels, test_attention_kernels: the AMX path is only ever
#       exercised on such a machine), measure the FMA peak, then time
#       (WHAT, default "enc:t,s,b+,l threads:2,16 video:t"):
#         encoder + prompt -> masks: samc fast, samc bf16, pytorch fp32,
#           pytorch bf16 (samc bench / tools/bench_pytorch.py, --runs 3
#           --warmup 1 --prompts 5, medians of 3), the four interleaved per
#           (config, threads);
#         tracked frame: tools/bench_video (samc) and
#           tools/bench_pytorch_video.py on one checkpoint written there.
#         portable:t,l (issue 20): samc fast, portable build against the
#           build for the machine's CPU and the portable build forced to
#           AVX2 (SAMC_ISA=v3), interleaved per (config, threads), and one
#           tracked frame (t, FRAMES frames) of each; a table of ratios.
#       Every RESULT line goes to $OUT/results.txt (or DIR/results.txt), the
#       logs beside it; a table of ratios is printed last
#       (tools/bench_table.py).
#
# Environment: RUNS (3), WARMUP (1), PROMPTS (5), FRAMES (12), WAIT (the
# OMP_WAIT_POLICY of both sides; default PASSIVE, samc bench's own default). Both sides print their thread counts and
# libraries. docs/benchmarks.md has the numbers and how they were taken.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/tools/device_pack.sh"
cmd=${1:?usage: bench_device.sh pack|run [DIR] [WHAT]}
dir=$(realpath -m "${2:-$here/.devbench}")

pack() {
    : "${SAM2_SRC:?give the official sam2 checkout in SAM2_SRC}"
    local build=${BUILD:-$here/build-device} native=${BUILD:-$here/build-device}-native stage
    local progs=(samc bench_video test_gemm_kernels test_attention_kernels test_ops test_isa)
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release "${SAMC_PACK_CMAKE_FLAGS[@]}" >/dev/null
    cmake --build "$build" -j2 --target samc_cli bench_video test_gemm_kernels test_attention_kernels test_ops \
        test_isa >/dev/null
    cmake -S "$here" -B "$native" -DCMAKE_BUILD_TYPE=Release "${SAMC_PACK_CMAKE_FLAGS[@]}" -DSAMC_X86_BASELINE="${DEVICE_MARCH:-sapphirerapids}" \
        >/dev/null
    cmake --build "$native" -j2 --target samc_cli bench_video >/dev/null
    stage=$(mktemp -d)
    mkdir -p "$dir" "$stage/bin-native"
    bundle_programs "$stage" "${progs[@]/#/$build/}"
    cp "$native/samc" "$native/bench_video" "$stage/bin-native/"
    tar -C "$stage" -cJf "$dir/bundle.tar.xz" bin bin-native lib
    rm -rf "$stage"
    pack_sources "$dir"
    echo "${DEVICE_MARCH:-sapphirerapids}" >"$dir/DEVICE_MARCH"
    du -sh "$dir"/*
}

# ---- on the measuring machine ----------------------------------------------

samc_run() { # BINARY ARGS...: through the bundled loader and libraries
    local b=$1
    shift
    "$D/lib/ld-linux-x86-64.so.2" --library-path "$D/lib" "$D/${BIN:-bin}/$b" "$@"
}

header() {
    echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus," \
        "amx: $(grep -m1 -o 'amx_bf16' /proc/cpuinfo || echo no)," \
        "avx512_bf16: $(grep -m1 -o 'avx512_bf16' /proc/cpuinfo || echo no)"
    echo "== samc $(cat "$dir/SAMC_COMMIT"), sam2 $(cat "$dir/SAM2_COMMIT"), $(python3 -c \
        'import torch; print("torch", torch.__version__, "mkldnn", torch.backends.mkldnn.is_available())')"
    echo "== portable: $(samc_run samc --version | tail -1)"
    echo "== for $(cat "$dir/DEVICE_MARCH" 2>/dev/null): $(BIN=bin-native samc_run samc --version | tail -1)"
    samc_run test_isa 2>&1 | grep -E 'levels|PASSED|FAILED|ERROR' || true
    samc_run test_gemm_kernels 2>&1 | grep -E 'bf16 kernel|PASSED|FAILED|ERROR' || true
    samc_run test_attention_kernels 2>&1 | grep -E 'PASSED|FAILED|ERROR' || true
    for t in ${THREADS//,/ }; do samc_run samc bench --sgemm --threads "$t" | tee -a "$res"; done
}

enc_round() { # config threads
    local c=$1 t=$2 name=${1#sam2.1_hiera_}
    local common=(--config "$c" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --prompts "$PROMPTS")
    for impl in fast bf16; do
        OMP_NUM_THREADS=$t samc_run samc bench "${common[@]}" --impl "$impl" >"$log/samc_${impl}_${name}_$t.log" 2>&1
    done
    for dt in fp32 bf16; do
        OMP_NUM_THREADS=$t MKL_NUM_THREADS=$t python3 "$here/tools/bench_pytorch.py" "${common[@]}" --no-tune \
            --dtype "$dt" >"$log/torch_${dt}_${name}_$t.log" 2>&1 || true # see below
    done
    # A side that failed (PyTorch 1.13's bf16 autocast has no CPU layer_norm)
    # leaves no RESULT line: the table shows it missing, the run goes on.
    grep -h '^RESULT' "$log"/{samc_fast,samc_bf16,torch_fp32,torch_bf16}_"${name}_$t.log" | tee -a "$res" || true
}

video_round() { # config threads
    local c=$1 t=$2 name=${1#sam2.1_hiera_} ck=/tmp/samcdev/ckpt
    [ -f "$ck/$name.pt" ] || python3 "$here/tools/make_checkpoint.py" --config "$c" --seed 0 \
        --out-dir "$ck" --name "$name" --formats pt,config >"$log/ckpt_$name.log" 2>&1
    for impl in fast bf16; do
        OMP_NUM_THREADS=$t samc_run bench_video "$ck/$name.pt" "$ck/$name.config.json" "$impl" "$FRAMES" 1024 \
            >"$log/video_samc_${impl}_${name}_$t.log" 2>&1
        sed -n "s/^RESULT video impl=$impl /RESULT video impl=samc_$impl config=$c threads=$t /p" \
            "$log/video_samc_${impl}_${name}_$t.log" | tee -a "$res"
    done
    OMP_NUM_THREADS=$t python3 "$here/tools/bench_pytorch_video.py" --config "$c" --checkpoint "$ck/$name.pt" \
        --threads "$t" --frames "$FRAMES" >"$log/video_torch_${name}_$t.log" 2>&1
    grep -h '^RESULT' "$log/video_torch_${name}_$t.log" | tee -a "$res"
}

# issue 20: the portable build against the build for this CPU (and forced
# to AVX2), interleaved; RESULT lines tagged impl=samc_portable|samc_native|samc_v3
portable_round() { # config threads
    local c=$1 t=$2 name=${1#sam2.1_hiera_} v
    local common=(--config "$c" --threads "$t" --runs "$RUNS" --warmup "$WARMUP" --prompts "$PROMPTS" --impl fast)
    for v in native portable v3 portable native v3; do
        local bin=bin isa=""
        [ "$v" = native ] && bin=bin-native
        [ "$v" = v3 ] && isa=v3
        OMP_NUM_THREADS=$t SAMC_ISA=$isa BIN=$bin samc_run samc bench "${common[@]}" \
            >>"$log/portable_${v}_${name}_$t.log" 2>&1
    done
    for v in native portable v3; do
        grep -h '^RESULT' "$log/portable_${v}_${name}_$t.log" | sed "s/impl=fast /impl=samc_$v /" | tee -a "$res"
    done
}

portable_video() { # threads
    local t=$1 ck=/tmp/samcdev/ckpt v
    [ -f "$ck/t.pt" ] || python3 "$here/tools/make_checkpoint.py" --config sam2.1_hiera_t --seed 0 \
        --out-dir "$ck" --name t --formats pt,config >"$log/ckpt_t.log" 2>&1
    for v in native portable v3; do
        local bin=bin isa=""
        [ "$v" = native ] && bin=bin-native
        [ "$v" = v3 ] && isa=v3
        OMP_NUM_THREADS=$t SAMC_ISA=$isa BIN=$bin samc_run bench_video "$ck/t.pt" "$ck/t.config.json" fast "$FRAMES" 1024 \
            >"$log/portable_video_${v}_$t.log" 2>&1
        sed -n "s/^RESULT video\(_frame\)\? impl=fast /RESULT video\1 impl=samc_$v config=sam2.1_hiera_t threads=$t /p" \
            "$log/portable_video_${v}_$t.log" | tee -a "$res"
    done
}

portable_table() { # the ratios to the build for this CPU, per (what, config, threads)
    python3 - "$res" <<'PY'
import re, sys, collections
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    kv = dict(re.findall(r'(\w+)=(\S+)', line))
    impl = kv.get("impl", "")
    if not impl.startswith("samc_") or impl.split("_")[1] not in ("native", "portable", "v3"):
        continue
    v, key = impl.split("_")[1], (kv.get("config"), kv.get("threads"))
    if "enc_ms" in kv:
        rows[("encoder",) + key][v] = float(kv["enc_ms"])
        rows[("prompt -> masks",) + key][v] = float(kv["prompt_ms"])
    elif "last_frame_ms" in kv:
        rows[("tracked frame (last)",) + key][v] = float(kv["last_frame_ms"])
    elif "per_frame_ms" in kv:
        rows[("tracked frame (full bank)",) + key][v] = float(kv["per_frame_ms"])
print("| what | config | threads | native ms | portable ms | portable / native | v3 ms | v3 / portable |")
print("|---|---|---|---|---|---|---|---|")
for (w, c, t), r in sorted(rows.items()):
    if "native" in r and "portable" in r:
        v3 = r.get("v3")
        print(f"| {w} | {c} | {t} | {r['native']:.1f} | {r['portable']:.1f} | {r['portable'] / r['native']:.3f} | "
              + (f"{v3:.1f} | {v3 / r['portable']:.2f} |" if v3 else "- | - |"))
PY
}

run() {
    local what=${1:-"enc:t,s,b+,l threads:2,16 video:t"} w enc="" video="" portable=""
    THREADS=2,16
    for w in $what; do
        case $w in
            enc:*) enc=${w#enc:} ;;
            video:*) video=${w#video:} ;;
            portable:*) portable=${w#portable:} ;;
            threads:*) THREADS=${w#threads:} ;;
            *) echo "bench_device.sh: unknown item '$w'" >&2; exit 2 ;;
        esac
    done
    RUNS=${RUNS:-3} WARMUP=${WARMUP:-1} PROMPTS=${PROMPTS:-5} FRAMES=${FRAMES:-12}
    # samc bench re-executes itself (/proc/self/exe) to set its PASSIVE
    # default when the variable is unset, which would restart the bundled
    # loader instead: give it the policy explicitly.
    export OMP_WAIT_POLICY=${WAIT:-PASSIVE}
    # Freed memory kept by glibc for reuse (no first-touch page faults on
    # every forward's activations), for both sides alike: samc bench sets
    # the same with mallopt, bench_pytorch.py's own tuning (skipped here by
    # --no-tune) sets these; bench_video and the PyTorch video script read them.
    export MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 MALLOC_TOP_PAD_=268435456
    D=/tmp/samcdev
    mkdir -p "$D"
    tar -C "$D" -xJf "$dir/bundle.tar.xz"
    tar -C "$D" -xJf "$dir/sam2src.tar.xz"
    export SAM2_SRC=$D SAM2_COMMIT=$(cat "$dir/SAM2_COMMIT") PYTHONUNBUFFERED=1
    log=${OUT:-$dir}/logs
    res=${OUT:-$dir}/results.txt
    mkdir -p "$log"
    header
    local c t
    for c in ${enc//,/ }; do
        for t in ${THREADS//,/ }; do enc_round "sam2.1_hiera_$c" "$t"; done
    done
    for c in ${video//,/ }; do
        for t in ${THREADS//,/ }; do video_round "sam2.1_hiera_$c" "$t"; done
    done
    for c in ${portable//,/ }; do
        for t in ${THREADS//,/ }; do portable_round "sam2.1_hiera_$c" "$t"; done
    done
    if [ -n "$portable" ]; then
        for t in ${THREADS//,/ }; do portable_video "$t"; done
    fi
    (cd "$log/.." && tar -czf logs.tar.gz logs && rm -rf logs)
    if [ -n "$portable" ]; then
        portable_table
    fi
    [ -z "$enc$video" ] || python3 "$here/tools/bench_table.py" "$res" || cat "$res"
}

case $cmd in
    pack) pack ;;
    run) run "${3:-}" ;;
    *) echo "usage: bench_device.sh pack|run [DIR] [WHAT]" >&2; exit 2 ;;
esac
