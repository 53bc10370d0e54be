#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tables of ratios from the RESULT lines of `samc bench`, tools/bench_pytorch.py,
tools/bench_video.c and tools/bench_pytorch_video.py (as tools/bench_device.sh
collects them): one row per (config, threads); several lines of one variant
(repeated rounds) give their median.

  tools/bench_table.py results.txt [more.txt ...]

Encoder columns: median ms of each side, samc over PyTorch as a speed-up
(>1: samc faster), samc fast's GFLOP/s as % of the FMA peak measured with the
same threads (`RESULT fma_peak`, if present). prompt -> masks likewise. Video:
ms per tracked frame with a full memory bank."""

import re
import statistics
import sys
from collections import defaultdict

FIELD = re.compile(r'(\w+)=("[^"]*"|\S+)')


def parse(paths):
    enc, video, peak = defaultdict(list), defaultdict(list), {}
    for path in paths:
        for line in open(path):
            if not line.startswith("RESULT "):
                continue
            kv = {k: v.strip('"') for k, v in FIELD.findall(line)}
            if "fma_peak" in line:
                peak[int(kv["threads"])] = float(kv["gflops"])
            elif line.startswith("RESULT video "):
                video[(kv.get("config", "?"), int(kv.get("threads", 0)), kv["impl"])].append(float(kv["per_frame_ms"]))
            elif "enc_ms" in kv:
                enc[(kv["config"], int(kv["threads"]), kv["impl"])].append(kv)
    return enc, video, peak


def med(rows, key):
    vals = [float(r[key]) for r in rows if key in r]
    return statistics.median(vals) if vals else None


def cell(v, fmt="%.0f"):
    return fmt % v if v is not None else "-"


def ratio(a, b):
    return "%.2fx" % (b / a) if a and b else "-"


def enc_table(enc, peak):
    keys = sorted({(c, t) for c, t, _ in enc}, key=lambda k: (k[0], k[1]))
    print("| config | threads | samc fast ms | PyTorch fp32 ms | fast vs fp32 | samc bf16 ms | PyTorch bf16 ms "
          "| bf16 vs bf16 | fast GFLOP/s (% FMA peak) | prompt samc fast / bf16 ms | prompt PyTorch fp32 / bf16 ms "
          "| prompt fast vs fp32 |")
    print("|" + "---|" * 12)
    for c, t in keys:
        g = {impl: rows for (cc, tt, impl), rows in enc.items() if (cc, tt) == (c, t)}
        f, b = g.get("fast", []), g.get("bf16", [])
        p, pb = g.get("pytorch", []), g.get("pytorch_bf16", [])
        gf = med(f, "gflops")
        pct = " (%.0f%%)" % (100 * gf / peak[t]) if gf and t in peak else ""
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s%s | %s / %s | %s / %s | %s |" % (
            c.replace("sam2.1_hiera_", ""), t, cell(med(f, "enc_ms")), cell(med(p, "enc_ms")),
            ratio(med(f, "enc_ms"), med(p, "enc_ms")), cell(med(b, "enc_ms")), cell(med(pb, "enc_ms")),
            ratio(med(b, "enc_ms"), med(pb, "enc_ms")), cell(gf), pct,
            cell(med(f, "prompt_ms"), "%.1f"), cell(med(b, "prompt_ms"), "%.1f"),
            cell(med(p, "prompt_ms"), "%.1f"), cell(med(pb, "prompt_ms"), "%.1f"),
            ratio(med(f, "prompt_ms"), med(p, "prompt_ms"))))


def video_table(video):
    keys = sorted({(c, t) for c, t, _ in video})
    print("\n| config | threads | samc fast ms/frame | samc bf16 | PyTorch fp32 | fast vs PyTorch |")
    print("|" + "---|" * 6)
    for c, t in keys:
        g = {impl: statistics.median(v) for (cc, tt, impl), v in video.items() if (cc, tt) == (c, t)}
        f, b, p = g.get("samc_fast"), g.get("samc_bf16"), g.get("pytorch")
        print("| %s | %d | %s | %s | %s | %s |" % (c.replace("sam2.1_hiera_", ""), t, cell(f), cell(b), cell(p),
                                                  ratio(f, p)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    enc, video, peak = parse(sys.argv[1:])
    if peak:
        print("FMA peak: " + ", ".join("%d threads %.0f GFLOP/s" % kv for kv in sorted(peak.items())) + "\n")
    if enc:
        enc_table(enc, peak)
    if video:
        video_table(video)


if __name__ == "__main__":
    main()
