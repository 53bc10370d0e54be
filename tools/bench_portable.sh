#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench_portable.sh - the portable build (the default: everything for the
# x86-64-v2 baseline, the kernels of fast/isa/ chosen at run time) against a
# -march=native build, and each forced level (SAMC_ISA=v3, v2) against the
# level the CPU runs, interleaved round by round in one sitting
# (docs/benchmarks.md, "Portable build").
#
#   cmake -S . -B build && cmake --build build --target samc_cli bench_video bench_kernels
#   cmake -S . -B build-native -DSAMC_NATIVE=ON -DSAMC_BUILD_TESTS=OFF &&
#     cmake --build build-native --target samc_cli bench_video
#   tools/bench_portable.sh [PORTABLE_BUILD] [NATIVE_BUILD]
#
# Environment: CKPT (a sam2.1_hiera_t .pt for the tracked frame, e.g. from
# tools/make_checkpoint.py --config sam2.1_hiera_t --seed 0; none: no video
# rows), ROUNDS (3), THREADS (1: times are CPU times of the process then, steady
# on a shared machine; more: wall times too), CONFIGS ("sam2.1_hiera_t
# sam2.1_hiera_l": encoder + prompt -> masks), LEVELS ("v3 v2": forced levels
# timed on CONFIGS' first config), OUT (results file, default
# /tmp/bench_portable.txt). Every measurement is a RESULT line in OUT, tagged
# with its variant and round; the table at the end is medians over rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
P=$(realpath "${1:-$here/build}") N=$(realpath "${2:-$here/build-native}")
ROUNDS=${ROUNDS:-3} THREADS=${THREADS:-1} OUT=${OUT:-/tmp/bench_portable.txt}
CONFIGS=${CONFIGS:-"sam2.1_hiera_t sam2.1_hiera_l"} LEVELS=${LEVELS:-"v3 v2"}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} OMP_NUM_THREADS=$THREADS
: >"$OUT"
for b in "$P" "$N"; do [ -x "$b/samc" ] || { echo "no $b/samc: build it first (see the header)"; exit 2; }; done
echo "== $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT"
echo "== portable: $("$P/samc" --version | tail -1)" | tee -a "$OUT"
echo "== native:   $("$N/samc" --version | tail -1)" | tee -a "$OUT"

# run VARIANT ROUND CMD...: the RESULT lines of CMD, tagged
run() {
    local v=$1 r=$2
    shift 2
    "$@" 2>/dev/null | grep '^RESULT' | sed "s/^RESULT /RESULT variant=$v round=$r /" >>"$OUT" || true
}

first=${CONFIGS%% *}
for r in $(seq 1 "$ROUNDS"); do
    for cfg in $CONFIGS; do
        # native and portable alternate, the order swapped every round
        for v in $([ $((r % 2)) -eq 1 ] && echo "native portable" || echo "portable native"); do
            b=$([ "$v" = native ] && echo "$N" || echo "$P")
            run "$v" "$r" "$b/samc" bench --config "$cfg" --threads "$THREADS" --runs 1 --warmup 1 --prompts 3
        done
    done
    for lv in $LEVELS; do
        SAMC_ISA=$lv run "$lv" "$r" "$P/samc" bench --config "$first" --threads "$THREADS" --runs 1 --warmup 1 \
            --prompts 3
    done
    if [ -n "${CKPT:-}" ]; then
        for v in $([ $((r % 2)) -eq 1 ] && echo "native portable" || echo "portable native"); do
            b=$([ "$v" = native ] && echo "$N" || echo "$P")
            [ -x "$b/bench_video" ] && run "$v" "$r" "$b/bench_video" "$CKPT" - fast 4 1024
        done
        for lv in $LEVELS; do
            SAMC_ISA=$lv run "$lv" "$r" "$P/bench_video" "$CKPT" - fast 4 1024
        done
    fi
    echo "round $r done" >&2
done
# Each level's FMA peak and its GEMMs on the first config's shapes (1 thread, CPU time)
if [ -x "$P/bench_kernels" ]; then
    for lv in v4 $LEVELS; do
        SAMC_ISA=$lv "$P/bench_kernels" --threads 1 --model "${first##*_}" --no-attention --no-bf16 --reps 3 2>/dev/null |
            grep -E '^RESULT|^FMA peak' | sed "s/^RESULT /RESULT variant=$lv round=0 /; s/^FMA peak/RESULT variant=$lv round=0 kind=peak FMA_peak/" >>"$OUT" || true
    done
fi
/usr/bin/python3 - "$OUT" "$THREADS" <<'EOF'
import re, statistics, sys
from collections import defaultdict
path, threads = sys.argv[1], int(sys.argv[2])
rows = defaultdict(list)   # (variant, what) -> values
peak, gemm = {}, defaultdict(lambda: [0.0, 0.0])
for line in open(path):
    if not line.startswith("RESULT"):
        continue
    kv = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
    v = kv["variant"]
    if kv.get("kind") == "peak":
        peak[v] = float(re.search(r"FMA_peak ([\d.]+)", line).group(1))
    elif kv.get("kind") == "gemm":
        fl = 2.0 * int(kv["M"]) * int(kv["N"]) * int(kv["K"])
        gemm[v][0] += fl
        gemm[v][1] += float(kv["ms"]) * 1e-3
    elif "impl" in kv and "enc_ms" in kv:
        cfg = kv["config"]
        metric = "cpu_ms" if threads == 1 else "ms"
        rows[(v, f"{cfg} encoder")].append(float(kv["enc_" + metric]))
        rows[(v, f"{cfg} prompt -> masks")].append(float(kv["prompt_" + metric]))
        rows[(v, f"{cfg} encoder GFLOP/s")].append(float(kv["gflops"]))
    elif "last_frame_cpu_ms" in kv:
        rows[(v, "tracked frame (t, 1024, frame 3)")].append(
            float(kv["last_frame_cpu_ms" if threads == 1 else "last_frame_ms"]))
med = {k: statistics.median(x) for k, x in rows.items()}
whats = sorted({w for _, w in med if "GFLOP" not in w})
unit = "CPU ms" if threads == 1 else "ms"
print(f"\n| {threads} thread(s), {unit}, median of rounds | native | portable | portable / native |")
print("|---|---|---|---|")
for w in whats:
    if ("native", w) in med and ("portable", w) in med:
        n, p = med[("native", w)], med[("portable", w)]
        print(f"| {w} | {n:.1f} | {p:.1f} | {p / n:.3f} |")
levels = ["portable"] + [v for v in sorted({v for v, _ in med}) if v not in ("native", "portable")]
print(f"\n| forced level ({unit}) | " + " | ".join(levels) + " |")
print("|---|" + "---|" * len(levels))
for w in whats:
    if all((v, w) in med for v in levels):
        print(f"| {w} | " + " | ".join(f"{med[(v, w)]:.1f}" for v in levels) + " |")
if peak:
    print("\n| level | FMA peak, 1 thread (GFLOP/s) | encoder GEMMs (GFLOP/s) | % of the level's peak |")
    print("|---|---|---|---|")
    for v in peak:
        g = gemm[v][0] / gemm[v][1] * 1e-9 if gemm[v][1] else 0
        print(f"| {'v4 (the CPU' + chr(39) + 's)' if v == 'v4' else v} | {peak[v]:.1f} | {g:.1f} | {100 * g / peak[v]:.0f}% |")
EOF
