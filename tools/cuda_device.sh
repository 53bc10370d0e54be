#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cuda_device.sh - the CUDA implementation (docs/gpu.md) on a machine with a
# GPU, in one run: parity of every committed SAM 2 image and AMG fixture with
# --impl cuda and cuda-bf16 (chained and isolated), the op table of every
# cuda body against fast at the real shapes of t, s, b+, l, and the
# benchmark against PyTorch on the same GPU.
#
# Two steps, because the GPU machine (the lent one: an H100, PyTorch, nvcc,
# cuBLAS) has none of samc's Debian dependencies:
#
#   tools/cuda_device.sh pack [DIR]     here: build samc (x86-64-v4) with the
#       plugin (-DSAMC_CUDA=ON, nvcc for CUDA_ARCHS, default 90), bundle the
#       programs with every shared library they load except CUDA's own
#       (the GPU machine's driver and cuBLAS are used), the official sam2
#       sources ($SAM2_SRC, its python package only) and the scripts the run
#       needs, into DIR (default build-cudadev: ignored by git, ~30 MB).
#   tools/cuda_device.sh run [DIR] [WHAT]   there, from a checkout of the
#       repository (its fixtures/): unpack to /tmp, then WHAT (default
#       "parity optest bench amg"):
#         parity  samc parity on fixtures/*.h5 and fixtures/amg/*.h5, cuda and
#                 cuda-bf16, chained and isolated (one line each; logs kept)
#         optest  test_ops with SAMC_OPTEST_REF=fast SAMC_OPTEST_IMPLS=cuda,
#                 cuda-bf16 SAMC_OPTEST_FULL=1 on OPCONFIGS (default t,s,b+,l)
#         bench   per config (CONFIGS, default t,s,b+,l): samc bench --impl
#                 cuda and cuda-bf16 (SAMC_CUDA_TIMING=1: the encoder's GPU
#                 time), PyTorch fp32 (TF32 off), bf16 autocast and
#                 torch.compile bf16 (tools/bench_pytorch_gpu.py), in one run
#         amg     the automatic mask generator, 32x32 points on t: samc
#                 --impl cuda against the official generator on the GPU
#                 (tools/bench_amg.py --device cuda)
#       Results go to $OUT (or DIR): results.txt and logs.tar.xz (every
#       log, archived after each item); a summary is printed last. BUILD_THERE=1 rebuilds the plugin on that machine with
#       its nvcc (cmake -S cuda: the plugin needs no other dependency).
#
# Environment: RUNS (20), WARMUP (3), PROMPTS (5), CONFIGS, OPCONFIGS, IMPLS
# (cuda,cuda-bf16), MODES (fp32,bf16,compile), AMG_RUNS (2).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$here/tools/device_pack.sh" ] && . "$here/tools/device_pack.sh" # pack only (run works from DIR)
cmd=${1:?usage: cuda_device.sh pack|run [DIR] [WHAT]}
dir=$(realpath -m "${2:-$here/build-cudadev}")

pack() {
    : "${SAM2_SRC:?give the official sam2 checkout in SAM2_SRC}"
    local build=${BUILD:-$here/build-cudapack} stage nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSAMC_NATIVE=OFF \
        "${SAMC_PACK_CMAKE_FLAGS[@]}" -DSAMC_WITH_OPENBLAS=OFF -DSAMC_CUDA=ON \
        -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" >/dev/null
    cmake --build "$build" -j2 --target samc_cli test_ops samc_cuda >/dev/null
    cc -O2 -march=x86-64-v4 -I "$here/include" -I "$here" "$here/tools/bench_amg.c" "$build/libsamc.a" \
        $(samc_link_flags "$build") \
        -fopenmp -lm -o "$build/bench_amg"
    stage=$(mktemp -d)
    mkdir -p "$stage/tools" "$dir"
    bundle_programs "$stage" "$build"/{samc,test_ops,bench_amg}
    cp "$build/libsamc_cuda.so" "$stage/lib/"
    # the plugin's own needs, but CUDA's libraries: the GPU machine's match its driver
    ldd "$build/libsamc_cuda.so" | awk '/=> \//{print $3}' | grep -Ev '/libcu(blas|blasLt|da|dart)\.so' |
        xargs -r -I{} cp -Ln {} "$stage/lib/"
    cp "$here/tools/cuda_device.sh" "$dir/" # run from DIR, one level below the repository root
    cp "$here"/tools/*.py "$here/tools/cuda_device.sh" "$stage/tools/" # the Python sides import each other
    mkdir -p "$stage/cuda_src" # BUILD_THERE: the plugin's sources and the headers it reads
    cp -r "$here/cuda" "$here/include" "$here/core" "$stage/cuda_src/"
    tar -C "$stage" -cJf "$dir/bundle.tar.xz" bin lib tools cuda_src
    rm -rf "$stage"
    pack_sources "$dir"
    du -sh "$dir"/*
}

# ---- on the GPU machine ------------------------------------------------------

cuda_libdir() { # where this machine's libcublas.so.13 is
    local f
    f=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 /{print $NF; exit}')
    [ -n "$f" ] || f=$(find /usr/local/cuda*/ /usr/lib /opt -name 'libcublas.so.13' 2>/dev/null | head -1)
    [ -n "$f" ] || f=$(python3 -c 'import glob,site; print(next(iter(sorted(glob.glob(
        p + "/nvidia/**/libcublas.so.13", recursive=True)[0] for p in site.getsitepackages() if glob.glob(
        p + "/nvidia/**/libcublas.so.13", recursive=True))), ""))' 2>/dev/null || true)
    [ -n "$f" ] || { echo "cuda_device.sh: no libcublas.so.13 on this machine" >&2; exit 1; }
    dirname "$f"
}

samc_run() { # BINARY ARGS...: through the bundled loader and libraries
    local b=$1
    shift
    "$D/lib/ld-linux-x86-64.so.2" --library-path "$LIBPATH" "$D/bin/$b" "$@"
}

header() {
    echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader)"
    echo "== CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus"
    echo "== samc $(cat "$dir/SAMC_COMMIT"), sam2 $(cat "$dir/SAM2_COMMIT"), $(python3 -c \
        'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'), cuBLAS from $CUDALIB"
}

parity() {
    local impl dump mode name rc
    for impl in ${IMPLS//,/ }; do
        for dump in "$here"/fixtures/*.h5 "$here"/fixtures/amg/*.h5; do
            for mode in chained isolated; do
                name=$(basename "$dump" .h5)
                rc=0
                timeout 300 "$D/lib/ld-linux-x86-64.so.2" --library-path "$LIBPATH" "$D/bin/samc" parity "$dump" \
                    --impl "$impl" $([ $mode = isolated ] && echo --isolated) \
                    >"$log/parity_${impl}_${mode}_$name.log" 2>&1 || rc=$?
                printf 'PARITY impl=%s mode=%s fixture=%s rc=%d %s | %s\n' "$impl" "$mode" "$name" "$rc" \
                    "$(grep -E '^worst rel' "$log/parity_${impl}_${mode}_$name.log" | tail -1)" \
                    "$(grep -E 'passed, [0-9]+ failed' "$log/parity_${impl}_${mode}_$name.log" | tail -1)" | tee -a "$res"
            done
        done
    done
}

optest() {
    SAMC_OPTEST_REF=fast SAMC_OPTEST_IMPLS=$IMPLS SAMC_OPTEST_FULL=1 SAMC_OPTEST_THREADS=$(nproc) \
        SAMC_OPTEST_CONFIGS=${OPCONFIGS:-t,s,b+,l} samc_run test_ops >"$log/optest.log" 2>&1 || true
    grep -E ' (cuda|cuda-bf16) ' "$log/optest.log" | sed 's/^/OPTEST /' | tee -a "$res" | grep -c . || true
    grep -E 'op table|FAIL|PASSED|FAILED|error' "$log/optest.log" | tail -5 | tee -a "$res"
}

bench_config() { # config
    local c=$1 name=${1#sam2.1_hiera_} impl mode
    for impl in ${IMPLS//,/ }; do
        SAMC_CUDA_TIMING=1 samc_run samc bench --config "$c" --impl "$impl" --runs "$RUNS" --warmup "$WARMUP" \
            --prompts "$PROMPTS" --threads "$(nproc)" >"$log/samc_${impl}_$name.log" 2>&1 || true
        grep -h '^RESULT' "$log/samc_${impl}_$name.log" | tee -a "$res" || true
        python3 - "$log/samc_${impl}_$name.log" "$impl" "$c" "$WARMUP" <<'EOF' | tee -a "$res"
import re, statistics, sys
path, impl, cfg, warm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
enc, heads, peak = [], [], 0.0
for line in open(path):
    m = re.match(r"cuda-timing (\S+) gpu_ms=([\d.]+) with_copies_ms=([\d.]+) peak_mib=(\d+)", line)
    if m:
        (enc if m.group(1).startswith("image_features") else heads).append((float(m.group(2)), float(m.group(3))))
        peak = max(peak, float(m.group(4)))
enc = enc[1 + warm:] or enc  # the first call captures the graph
if enc:
    print("RESULT impl=samc_%s config=%s enc_gpu_ms=%.3f enc_min=%.3f enc_with_copies_ms=%.3f heads_gpu_ms=%.3f peak_mib=%.0f"
          % (impl, cfg, statistics.median(e[0] for e in enc), min(e[0] for e in enc),
             statistics.median(e[1] for e in enc), statistics.median(h[0] for h in heads) if heads else -1, peak))
EOF
    done
    for mode in ${MODES//,/ }; do
        python3 "$D/tools/bench_pytorch_gpu.py" --config "$c" --mode "$mode" --runs "$RUNS" --warmup "$WARMUP" \
            --prompts "$PROMPTS" >"$log/torch_${mode}_$name.log" 2>&1 || tail -3 "$log/torch_${mode}_$name.log"
        grep -h '^RESULT' "$log/torch_${mode}_$name.log" | tee -a "$res" || true
    done
}

bench() {
    local c
    for c in ${CONFIGS//,/ }; do bench_config "sam2.1_hiera_$c"; done
}

amg() {
    python3 "$D/tools/bench_amg.py" --device cuda --config sam2.1_hiera_t --samc-bench "$D/bin/bench_amg.sh" \
        --impl cuda --threads "$(nproc)" --runs "${AMG_RUNS:-2}" >"$log/amg.log" 2>&1 || tail -5 "$log/amg.log"
    grep -h '^RESULT' "$log/amg.log" | tee -a "$res" || true
    grep -A4 '^| impl' "$log/amg.log" || true
}

build_there() { # the plugin with this machine's nvcc, from the bundled sources
    local b=/tmp/samccuda-build
    cmake -S "$D/cuda_src/cuda" -B "$b" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 >"$log/build_there.log" 2>&1
    cmake --build "$b" -j"$(nproc)" >>"$log/build_there.log" 2>&1
    cp "$b/libsamc_cuda.so" "$D/lib/"
    echo "== plugin rebuilt here ($(nvcc --version | tail -1))"
}

run() {
    local what=${1:-"parity optest bench amg"} w
    RUNS=${RUNS:-20} WARMUP=${WARMUP:-3} PROMPTS=${PROMPTS:-5} CONFIGS=${CONFIGS:-t,s,b+,l}
    IMPLS=${IMPLS:-cuda,cuda-bf16} MODES=${MODES:-fp32,bf16,compile}
    D=/tmp/samccuda
    mkdir -p "$D"
    tar -C "$D" -xJf "$dir/bundle.tar.xz"
    tar -C "$D" -xJf "$dir/sam2src.tar.xz"
    export SAM2_SRC=$D SAM2_COMMIT=$(cat "$dir/SAM2_COMMIT") PYTHONUNBUFFERED=1 SAMC_PLUGIN_PATH=$D/lib
    export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} # what samc bench would re-execute itself with
    export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
    CUDALIB=$(cuda_libdir)
    local drv
    drv=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
    LIBPATH="$D/lib:$CUDALIB${drv:+:$(dirname "$drv")}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # bench_amg.py runs its samc side as one program: through the bundled loader
    printf '#!/bin/sh\nexec "%s/lib/ld-linux-x86-64.so.2" --library-path "%s" "%s/bin/bench_amg" "$@"\n' \
        "$D" "$LIBPATH" "$D" >"$D/bin/bench_amg.sh"
    chmod +x "$D/bin/bench_amg.sh"
    # logs in one archive (what comes back from the GPU machine is a few files)
    log=/tmp/samccuda-logs
    res=${OUT:-$dir}/results.txt
    rm -rf "$log"
    mkdir -p "$log"
    : >"$res"
    header | tee -a "$res"
    [ "${BUILD_THERE:-0}" = 1 ] && build_there
    for w in $what; do
        case $w in
            parity | optest | bench | amg)
                echo "== $w ($(date +%T))"
                $w
                tar -C /tmp -cJf "${OUT:-$dir}/logs.tar.xz" samccuda-logs ;;
            *) echo "cuda_device.sh: unknown item '$w'" >&2; exit 2 ;;
        esac
    done
    echo "== summary"
    grep -E '^(PARITY|RESULT)' "$res" | sed -E 's/^PARITY //' | cut -c1-220 || true # (no column(1) on the GPU machine)
}

case $cmd in
    pack) pack ;;
    run) shift; [ $# -gt 0 ] && shift; run "$@" ;;
    *) echo "usage: cuda_device.sh pack|run [DIR] [WHAT]" >&2; exit 2 ;;
esac
