#!/bin/bash
# bench_device.sh - samc (fast, bf16) against current PyTorch (fp32, bf16
# autocast) on another machine, both sides timed in one run, interleaved.
#
# Two steps, because the machine that measures may have neither a compiler
# for samc nor its libraries (the lent machine of issue 12: PyTorch 2.x,
# nothing installable):
#
#   tools/bench_device.sh pack [DIR]      here: build samc for x86-64-v4
#       (AVX-512; the bf16 kernels are picked by CPUID at run time: AMX tiles,
#       AVX512_BF16, or the fallback), bundle the binaries with every shared
#       library they load (and the dynamic loader, so the target's glibc
#       does not matter) and the official sam2 sources ($SAM2_SRC, the
#       python package and its configs only) into DIR (default .devbench,
#       ~25 MB compressed). DIR must be ignored by git (.git/info/exclude).
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
    local build=${BUILD:-$here/build-device} stage
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSAMC_NATIVE=OFF \
        -DCMAKE_C_FLAGS="-march=x86-64-v4 -mtune=generic" >/dev/null
    cmake --build "$build" -j2 --target samc_cli test_gemm_kernels test_attention_kernels test_ops >/dev/null
    cc -O2 -march=x86-64-v4 -I "$here/include" "$here/tools/bench_video.c" "$build/libsamc.a" \
        $(samc_link_flags) \
        -fopenmp -lm -o "$build/bench_video"
    stage=$(mktemp -d)
    mkdir -p "$dir"
    bundle_programs "$stage" "$build"/{samc,bench_video,test_gemm_kernels,test_attention_kernels,test_ops}
    tar -C "$stage" -cJf "$dir/bundle.tar.xz" bin lib
    rm -rf "$stage"
    pack_sources "$dir"
    du -sh "$dir"/*
}

# ---- on the measuring machine ----------------------------------------------

samc_run() { # BINARY ARGS...: through the bundled loader and libraries
    local b=$1
    shift
    "$D/lib/ld-linux-x86-64.so.2" --library-path "$D/lib" "$D/bin/$b" "$@"
}

header() {
    echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus," \
        "amx: $(grep -m1 -o 'amx_bf16' /proc/cpuinfo || echo no)," \
        "avx512_bf16: $(grep -m1 -o 'avx512_bf16' /proc/cpuinfo || echo no)"
    echo "== samc $(cat "$dir/SAMC_COMMIT"), sam2 $(cat "$dir/SAM2_COMMIT"), $(python3 -c \
        'import torch; print("torch", torch.__version__, "mkldnn", torch.backends.mkldnn.is_available())')"
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

run() {
    local what=${1:-"enc:t,s,b+,l threads:2,16 video:t"} w enc="" video=""
    THREADS=2,16
    for w in $what; do
        case $w in
            enc:*) enc=${w#enc:} ;;
            video:*) video=${w#video:} ;;
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
    (cd "$log/.." && tar -czf logs.tar.gz logs && rm -rf logs)
    python3 "$here/tools/bench_table.py" "$res" || cat "$res"
}

case $cmd in
    pack) pack ;;
    run) run "${3:-}" ;;
    *) echo "usage: bench_device.sh pack|run [DIR] [WHAT]" >&2; exit 2 ;;
esac
