#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nothing outside the dispatched kernels uses an instruction above the
# x86-64-v2 baseline (docs/fast.md, "One build for every CPU"): the
# library's objects other than fast/isa/'s (compiled once per level, chosen
# by CPUID) and fast/gemm_bf16.c (AVX512_BF16 and AMX code behind target
# attributes, chosen by CPUID) hold no AVX instruction (a mnemonic v*, a
# ymm/zmm/mask register) and no AMX instruction. A portable x86-64 build
# only (CTest `baseline`).
# usage: check_baseline.sh OBJECT...
set -euo pipefail
bad=$(for o in "$@"; do
  case $o in */fast/gemm_bf16.c.o) continue ;; esac
  objdump -d --no-show-raw-insn "$o" | awk -v obj="${o##*samc_objects.dir/}" '
    /^[0-9a-f]+ <.*>:$/ { fn = $2 }
    /^ +[0-9a-f]+:\t/ {
      split($0, a, "\t"); m = a[2]; sub(/ .*/, "", m)
      if (m ~ /^v/ || m ~ /^(tile|tdp|ldtilecfg|kmov|kand|kor|kxor|knot|kshift)/ || $0 ~ /%[yz]mm|%k[1-7]/) {
        print obj, fn, m
      }
    }' | sort -u -k1,2
done)
if [ -n "$bad" ]; then
  echo "instructions above x86-64-v2 outside the dispatched kernels (object, function, first such mnemonic):"
  echo "$bad" | awk '!seen[$1 $2]++'
  exit 1
fi
echo "baseline: $# objects, no AVX or AMX outside fast/isa/ and fast/gemm_bf16.c"
