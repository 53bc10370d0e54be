#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SAM 3 image path at 1008, samc fast vs the official Sam3Processor, on the
same machine in one run, interleaved (samc, official, samc, official, ...),
2 threads each, random weights (timing does not depend on the values).

Both sides run the same session on the same synthetic RGB image, each step
timed in wall and process CPU time (all threads):
  set_image            preprocessing, ViT, neck
  set_text "a red car" text encoding + detector + masks + post-processing
  ground_text          the same prompt grounded again (set_confidence_threshold
                       re-runs the detector on a state with results), so
                       text encoding = set_text - ground_text
  add_box (after reset) a box-only prompt: the text "visual" + detector + masks
  ground_box           the box prompt grounded again
Each run is a fresh process; its peak RSS is the child's ru_maxrss (os.wait4).
samc's side is tools/sam3_random_run.c (built-in released config, random
weights; build line in its header), the official side this script's
--official-worker mode (tools/sam3_build.py: the recorded released tree,
seeded random weights, fp32, torch.set_num_threads).

usage: SAM3_SRC=... FTFY_SRC=... /usr/bin/python3 tools/bench_sam3.py \
          --samc-run /tmp/sam3_random_run [--pairs 2] [--size 768x1024] [--threads 2]

GFLOP/s are given for set_image (ViT + neck) and the text encoding, whose
FLOPs are counted analytically from the released config (flops_* below:
2 per multiply-add of every linear / convolution / attention product; norms,
softmax, GELU, RoPE and the resize not counted). The detector's work depends
on the prompt length and is not counted.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

STEPS = ["set_image", "set_text", "ground_text", "add_box", "ground_box"]
BOX = [0.45, 0.55, 0.3, 0.4]
TEXT = "a red car"


# --------------------------------------------------------------------------
# FLOPs from the released config (Sam3DualViTDetNeck over vitdet.ViT; VETextEncoder)
# --------------------------------------------------------------------------

def flops_vit_neck(img=1008, patch=14, dim=1024, depth=32, mlp_ratio=4.625, window=24,
                   global_blocks=(7, 15, 23, 31), d_model=256, scales=(4.0, 2.0, 1.0, 0.5)):
    g = img // patch
    n = g * g
    hid = int(dim * mlp_ratio)
    f = 2 * n * 3 * patch * patch * dim                      # patch embed
    wpad = -(-g // window) * window                          # windows padded to a multiple
    for b in range(depth):
        f += 2 * n * (4 * dim * dim + 2 * dim * hid)         # qkv, proj, fc1, fc2
        if b in global_blocks:
            f += 2 * 2 * n * n * dim                         # q k^T and p v over all tokens
        else:
            f += 2 * 2 * wpad * wpad * window * window * dim  # per padded window
    for s in scales:                                         # the neck's four levels
        if s == 4.0:
            f += 2 * g * g * dim * (dim // 2) * 4 + 2 * (2 * g) ** 2 * (dim // 2) * (dim // 4) * 4
            side, cin = 4 * g, dim // 4
        elif s == 2.0:
            f += 2 * g * g * dim * (dim // 2) * 4
            side, cin = 2 * g, dim // 2
        elif s == 1.0:
            side, cin = g, dim
        else:
            side, cin = g // 2, dim
        f += 2 * side * side * cin * d_model + 2 * side * side * d_model * d_model * 9
    return f


def flops_text(ctx=32, width=1024, layers=24, d_model=256):
    per_layer = 2 * ctx * (4 * width * width + 2 * width * 4 * width) + 2 * 2 * ctx * ctx * width
    return layers * per_layer + 2 * ctx * width * d_model    # + the resizer


# --------------------------------------------------------------------------
# The official side (one process per run)
# --------------------------------------------------------------------------

def synthetic_image(h, w):
    """sam3_random_run.c's image: a horizontal gradient with a red square."""
    import numpy as np
    x = (np.arange(w) * 255 // w).astype(np.uint8)
    img = np.repeat(np.repeat(x[None, :, None], h, 0), 3, 2)
    img[h // 3:h // 2, w // 3:w // 2, 0] = 255
    return img


def official_worker(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sam3_build
    import torch
    from PIL import Image
    t0 = time.time()
    ns = argparse.Namespace(sam3_src=args.sam3_src, sam3_commit=args.sam3_commit, ftfy_src=args.ftfy_src,
                            bpe=None, overrides=[], new_overrides=[], seed=0, nudge=[], threads=args.threads)
    built = sam3_build.build_from_args(ns)
    from sam3.model.sam3_image_processor import Sam3Processor
    proc = Sam3Processor(built.model, resolution=1008, device="cpu", confidence_threshold=0.5)
    print("official model built in %.1f s, %d threads" % (time.time() - t0, torch.get_num_threads()), flush=True)
    h, w = args.hw
    pil = Image.fromarray(synthetic_image(h, w))
    out = {}

    def step(name, fn):
        w0, c0 = time.time(), time.process_time()
        r = fn()
        out[name] = (time.time() - w0, time.process_time() - c0)
        return r

    with torch.inference_mode():
        state = step("set_image", lambda: proc.set_image(pil))
        step("set_text", lambda: proc.set_text_prompt(TEXT, state))
        step("ground_text", lambda: proc.set_confidence_threshold(0.5, state))
        kept_text = len(state["scores"])
        proc.reset_all_prompts(state)
        step("add_box", lambda: proc.add_geometric_prompt(BOX, True, state))
        step("ground_box", lambda: proc.set_confidence_threshold(0.5, state))
    for name in STEPS:
        print("RESULT impl=official step=%s wall_s=%.3f cpu_s=%.3f" % (name, *out[name]))
    print("official: %d / %d instances kept" % (kept_text, len(state["scores"])))


# --------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------

def run_child(cmd, env):
    """Run one process; its RESULT lines and peak RSS (ru_maxrss, KiB)."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit("%s failed (exit %d):\n%s" % (cmd[0], p.returncode, text[-3000:]))
    steps = {}
    for line in text.splitlines():
        if line.startswith("RESULT ") and "step=" in line:
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            steps[kv["step"]] = (float(kv["wall_s"]), float(kv["cpu_s"]))
        elif not line.startswith("RESULT"):
            print("    " + line, flush=True)
    return steps, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def table(runs, threads):
    med = {}
    for impl, rs in runs.items():
        med[impl] = {s: (statistics.median(r["steps"][s][0] for r in rs),
                         statistics.median(r["steps"][s][1] for r in rs)) for s in STEPS}
        med[impl]["text_enc"] = tuple(med[impl]["set_text"][i] - med[impl]["ground_text"][i] for i in (0, 1))
        med[impl]["rss"] = max(r["rss"] for r in rs) / 1024.0
    fl = {"set_image": flops_vit_neck(), "text_enc": flops_text()}
    rows = [("set_image", "image encoder (preprocess, ViT-L/14 32 blocks, neck)"),
            ("text_enc", "text encoding (set_text - ground_text)"),
            ("ground_text", "detector + masks, text prompt"),
            ("add_box", "box-only prompt (text \"visual\" + detector + masks)"),
            ("ground_box", "detector + masks, box prompt")]
    impls = list(runs)
    print("| stage | " + " | ".join("%s wall ms (CPU ms)" % i for i in impls) + " | speed-up wall (CPU) | "
          + " | ".join("%s GFLOP/s" % i for i in impls) + " |")
    print("|---|" + "---|" * (2 * len(impls) + 1))
    for key, name in rows:
        cells = ["%.0f (%.0f)" % (med[i][key][0] * 1e3, med[i][key][1] * 1e3) for i in impls]
        sp = "-"
        if len(impls) > 1 and med[impls[0]][key][0] > 0 and med[impls[0]][key][1] > 0:
            sp = "%.2fx (%.2fx)" % (med[impls[1]][key][0] / med[impls[0]][key][0],
                                    med[impls[1]][key][1] / med[impls[0]][key][1])
        gf = ["%.1f" % (fl[key] / med[i][key][0] / 1e9) if key in fl and med[i][key][0] > 0 else "-" for i in impls]
        print("| %s | %s | %s | %s |" % (name, " | ".join(cells), sp, " | ".join(gf)))
    print("| peak RSS (MiB) | " + " | ".join("%.0f" % med[i]["rss"] for i in impls) + " | | |")
    print("FLOPs counted: set_image %.1f GFLOP, text encoding %.2f GFLOP; %d threads each" % (
        fl["set_image"] / 1e9, fl["text_enc"] / 1e9, threads))
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samc-run", help="tools/sam3_random_run.c built (see its header)")
    ap.add_argument("--samc-impl", default="fast")
    ap.add_argument("--vocab", help="bpe_simple_vocab_16e6.txt.gz (default: the official one)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--size", default="768x1024", help="HxW of the synthetic image")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sam3-src", default=os.environ.get("SAM3_SRC"))
    ap.add_argument("--sam3-commit", default=os.environ.get("SAM3_COMMIT", "99d02f28c8d34610ab35559b72642b01f10fdb1e"))
    ap.add_argument("--ftfy-src", default=os.environ.get("FTFY_SRC"))
    ap.add_argument("--json", help="write the raw runs here")
    ap.add_argument("--table-from", metavar="JSON", help="print the table of the runs saved by --json and stop")
    ap.add_argument("--official-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.table_from:
        with open(args.table_from) as f:
            runs = {k: v for k, v in json.load(f).items() if v}
        return table(runs, args.threads)
    args.hw = tuple(int(v) for v in args.size.split("x"))
    if not args.sam3_src:
        ap.error("--sam3-src (or $SAM3_SRC) is needed")
    if args.official_worker:
        return official_worker(args)
    if not args.samc_run or not os.access(args.samc_run, os.X_OK):
        ap.error("--samc-run: an executable build of tools/sam3_random_run.c is needed")
    vocab = args.vocab or os.path.join(args.sam3_src, "sam3", "assets", "bpe_simple_vocab_16e6.txt.gz")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="false")
    samc_cmd = [args.samc_run, vocab, args.samc_impl, str(args.hw[0]), str(args.hw[1])]
    off_cmd = [sys.executable, os.path.abspath(__file__), "--official-worker", "--size", args.size,
               "--threads", str(args.threads), "--sam3-src", args.sam3_src, "--sam3-commit", args.sam3_commit]
    if args.ftfy_src:
        off_cmd += ["--ftfy-src", args.ftfy_src]
    runs = {"samc-" + args.samc_impl: [], "official": []}
    for k in range(args.pairs):
        for impl, cmd in (("samc-" + args.samc_impl, samc_cmd), ("official", off_cmd)):
            la0, w0 = loadavg(), time.time()
            steps, rss, cpu = run_child(cmd, env)
            r = {"steps": steps, "rss": rss, "cpu_s": cpu, "wall_s": time.time() - w0,
                 "load": [la0, loadavg()]}
            runs[impl].append(r)
            print("pair %d %s: %s; process %.0f s wall, %.0f s CPU, peak RSS %.0f MiB, load %.1f -> %.1f" % (
                k, impl, ", ".join("%s %.2f s (CPU %.2f)" % (s, *steps[s]) for s in STEPS), r["wall_s"],
                cpu, rss / 1024, la0, r["load"][1]), flush=True)
            if args.json:
                with open(args.json, "w") as f:
                    json.dump(runs, f, indent=1)
    table(runs, args.threads)


if __name__ == "__main__":
    main()
