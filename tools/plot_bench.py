#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Turn `samc bench` / tools/bench_pytorch.py outputs into the table and the
plot of docs/benchmarks.md.

  /usr/bin/python3 tools/plot_bench.py RESULT_FILES... [--peak 512] [--out docs/benchmarks.png]

Every input file may hold any number of `RESULT impl=... config=... ...`
lines (samc bench prints one per implementation, bench_pytorch.py one). The
encoder's FLOP count of a config is taken from samc's line (gflops x time);
PyTorch's GFLOP/s is computed over the same count. Prints a Markdown table
and writes a PNG with encoder time and prompt -> masks time per model size
(log scale), bars per implementation. Needs python3-matplotlib.
"""

import argparse
import re
import sys

SIZES = ["t", "s", "b+", "l"]
IMPLS = ["fast", "pytorch", "ref"]
COLORS = {"fast": "#1b7837", "pytorch": "#b2182b", "ref": "#888888"}


def parse(paths):
    rows = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                if not line.startswith("RESULT impl="):
                    continue
                kv = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
                cfg = kv["config"].replace("sam2.1_hiera_", "").replace("sam2_hiera_", "")
                rows[(cfg, kv["impl"])] = kv
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--peak", type=float, default=512.0, help="FMA peak in GFLOP/s for the %% column")
    ap.add_argument("--out", default="docs/benchmarks.png")
    ap.add_argument("--title", default="SAM 2.1 image predictor at 1024, 2 threads; ref: 1 thread, t only "
                    "(lower is better)")
    a = ap.parse_args()
    rows = parse(a.files)
    flops = {}
    for (cfg, impl), kv in rows.items():
        if "gflops" in kv:
            flops[cfg] = float(kv["gflops"]) * float(kv["enc_ms"]) / 1e3
    print("| model | impl | encoder ms, median (min-max) | encoder CPU s | prompt -> masks ms | GFLOP/s | %% of %.0f "
          "GFLOP/s | peak RSS MiB (beyond weights) | encoder vs PyTorch: wall, CPU |" % a.peak)
    print("|---|---|---|---|---|---|---|---|---|")
    for cfg in SIZES:
        base = rows.get((cfg, "pytorch"))
        for impl in IMPLS:
            kv = rows.get((cfg, impl))
            if not kv:
                continue
            enc = float(kv["enc_ms"])
            gf = flops.get(cfg, 0) / (enc / 1e3) if cfg in flops else float("nan")
            rss = float(kv["rss_mib"])
            beyond = rss - float(kv.get("weights_mib", 0))
            cpu = float(kv["enc_cpu_ms"]) / 1e3 if "enc_cpu_ms" in kv else float("nan")
            speed = "-"
            if base and impl != "pytorch":
                speed = "%.2fx, %.2fx" % (float(base["enc_ms"]) / enc,
                                          float(base.get("enc_cpu_ms", "nan")) / 1e3 / cpu)
            if impl == "ref":
                speed = "%.3fx wall" % (float(base["enc_ms"]) / enc) if base else "-"
            cpu_s = "-" if cpu != cpu else "%.2f" % cpu
            print("| %s | %s | %.0f (%.0f-%.0f) | %s | %.1f | %.1f | %.1f%% | %.0f (%.0f) | %s |" %
                  (cfg, impl, enc, float(kv["enc_min"]), float(kv["enc_max"]), cpu_s, float(kv["prompt_ms"]), gf,
                   100 * gf / a.peak, rss, beyond, speed))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: apt-get install python3-matplotlib; no plot written)", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    cfgs = [c for c in SIZES if any((c, i) in rows for i in IMPLS)]
    width = 0.8 / len(IMPLS)
    for ax, key, label in ((axes[0], "enc_ms", "image encoder (ms)"), (axes[1], "prompt_ms", "prompt -> masks (ms)")):
        for j, impl in enumerate(IMPLS):
            xs, ys = [], []
            for i, c in enumerate(cfgs):
                if (c, impl) in rows:
                    xs.append(i + (j - 1) * width)
                    ys.append(float(rows[(c, impl)][key]))
            if xs:
                ax.bar(xs, ys, width, label=impl, color=COLORS[impl])
                for x, y in zip(xs, ys):
                    ax.annotate("%.0f" % y if y >= 10 else "%.1f" % y, (x, y), ha="center", va="bottom",
                                fontsize=7)
        ax.set_xticks(range(len(cfgs)))
        ax.set_xticklabels(["hiera_" + c for c in cfgs])
        ax.set_yscale("log")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].legend()
    fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote " + a.out, file=sys.stderr)


if __name__ == "__main__":
    main()
