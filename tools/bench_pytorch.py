#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Time the official SAM 2 image predictor (PyTorch, CPU, fp32) the way
`samc bench` times samc: set_image (image encoder, with its transforms),
predict (one positive click, multimask, logits), and both end to end; median
and min/max of N runs after warm-up; peak RSS.

The environment is tuned in PyTorch's favour before torch is imported (the
script re-executes itself with it unless --no-tune):
  OMP_NUM_THREADS / MKL_NUM_THREADS = --threads, torch.set_num_threads(N)
  OMP_WAIT_POLICY=PASSIVE   torch's OpenMP workers sleep at once instead of
                            spinning, so they do not take the cores from
                            OpenBLAS's own pthreads (Debian's torch calls a
                            pthreads OpenBLAS for every matmul)
  OPENBLAS_NUM_THREADS=N    OpenBLAS's pool, the one doing the GEMMs
  MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_: large, so
                            glibc keeps freed activations instead of
                            unmapping them (no page-fault storm per forward)
OPENBLAS_CORETYPE is left as the environment has it: compare samc and torch
under the same one (both print it).

  SAM2_SRC=/work/sam2src /usr/bin/python3 tools/bench_pytorch.py \
      --config sam2.1_hiera_t --threads 2 --runs 5 --warmup 1
"""

import argparse
import contextlib
import ctypes
import os
import resource
import statistics
import sys
import time

TUNED = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TRIM_THRESHOLD_": str(1 << 31),
    "MALLOC_TOP_PAD_": str(1 << 28),
}


def parse_args():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import sam2_build  # noqa: E402 (argument helpers only; torch is imported later)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--prompts", type=int, default=1,
                   help="prompt -> masks of a run = the best of this many predicts (as samc bench --prompts)")
    p.add_argument("--size", type=int, default=1024, help="model.image_size")
    p.add_argument("--image", default="1200x900", help="WxH of the synthetic input image")
    p.add_argument("--no-tune", action="store_true", help="keep the environment as it is")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: set_image and predict under torch.autocast('cpu', dtype=torch.bfloat16), "
                   "PyTorch's own mixed precision (AMX / AVX512_BF16 kernels where the CPU has them)")
    return p.parse_args()


def retune(args):
    """Re-exec with the tuned environment (once)."""
    if args.no_tune or os.environ.get("SAMC_BENCH_TUNED") == "1":
        return
    env = dict(os.environ)
    env.update(TUNED)
    n = str(args.threads)
    env.update({"OMP_NUM_THREADS": n, "MKL_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "SAMC_BENCH_TUNED": "1"})
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas_info():
    """The OpenBLAS that torch loaded (via libblas.so.3), its core and threading."""
    path = None
    with open("/proc/self/maps") as f:
        for line in f:
            if "blas" in line and ".so" in line:
                path = line.split()[-1]
                if "openblas" in path:
                    break
    if not path:
        return "unknown", "unknown"
    try:
        lib = ctypes.CDLL(path)
        lib.openblas_get_corename.restype = ctypes.c_char_p
        lib.openblas_get_config.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode(), lib.openblas_get_config().decode() + " (" + path + ")"
    except (OSError, AttributeError):
        return "not OpenBLAS", path


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def synth(w, h):
    import numpy as np
    x = np.arange(w)[None, :]
    y = np.arange(h)[:, None]
    img = np.zeros((h, w, 3), np.uint8)
    img[..., 0] = (x * 255) // w
    img[..., 1] = (y * 255) // h
    img[..., 2] = (((x // 64 + y // 64) % 2) * 160 + ((x * y) % 61)).astype(np.uint8)
    return img


def main():
    args = parse_args()
    retune(args)
    import numpy as np
    import torch
    import sam2_build

    if args.size != 1024:
        args.overrides = list(args.overrides) + ["model.image_size=%d" % args.size]
    rss0 = rss_mib()
    built = sam2_build.build_from_args(args)
    torch.set_num_threads(args.threads)
    weights = rss_mib() - rss0
    pred = sam2_build.make_image_predictor(built.model)
    w, h = (int(v) for v in args.image.split("x"))
    img = synth(w, h)
    pt = np.array([[w * 0.45, h * 0.55]], np.float32)
    lab = np.array([1], np.int32)
    core, cfg = blas_info()
    print("pytorch bench: torch %s, threads %d, OpenBLAS core %s (%s), OPENBLAS_CORETYPE=%s"
          % (torch.__version__, torch.get_num_threads(), core, cfg, os.environ.get("OPENBLAS_CORETYPE", "")))
    print("environment: " + " ".join("%s=%s" % (k, os.environ.get(k, "")) for k in
                                     ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY",
                                      "MALLOC_MMAP_THRESHOLD_"]))
    print("model %s (seed %d weights), image %dx%d -> %d, prompt: 1 point, multimask, %s" %
          (args.config, args.seed, w, h, args.size, args.dtype))
    te, tp, tt, ce, cp = [], [], [], [], []
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if args.dtype == "bf16"
                else contextlib.nullcontext())
    with torch.inference_mode(), autocast:
        for r in range(args.warmup + args.runs):
            t0, c0 = time.perf_counter(), time.process_time()
            pred.set_image(img)
            t1, c1 = time.perf_counter(), time.process_time()
            best, bestc = float("inf"), float("inf")
            for _ in range(args.prompts):
                q0, qc = time.perf_counter(), time.process_time()
                pred.predict(point_coords=pt, point_labels=lab, multimask_output=True, return_logits=True)
                best = min(best, time.perf_counter() - q0)
                bestc = min(bestc, time.process_time() - qc)
            t2 = t1 + best
            if r < args.warmup:
                print("  (warm-up %d: encoder %.1f ms, prompt %.1f ms)" % (r + 1, 1e3 * (t1 - t0), 1e3 * (t2 - t1)),
                      file=sys.stderr)
                continue
            te.append(t1 - t0), tp.append(t2 - t1), tt.append(t2 - t0), ce.append(c1 - c0), cp.append(bestc)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def row(name, t):
        print("  %-16s median %9.2f ms   min %9.2f   max %9.2f" %
              (name, 1e3 * statistics.median(t), 1e3 * min(t), 1e3 * max(t)))

    print("pytorch: %d runs after %d warm-up" % (args.runs, args.warmup))
    row("image encoder", te)
    row("prompt -> masks", tp)
    row("end to end", tt)
    print("  encoder CPU time (all threads) median %.2f ms" % (1e3 * statistics.median(ce)))
    print("  prompt -> masks CPU time (all threads) median %.2f ms" % (1e3 * statistics.median(cp)))
    print("  peak RSS %.0f MiB (weights %.0f MiB, beyond the weights %.0f MiB)" % (peak, weights, peak - weights))
    print("RESULT impl=pytorch%s config=%s threads=%d enc_ms=%.2f enc_min=%.2f enc_max=%.2f prompt_ms=%.2f "
          "prompt_min=%.2f prompt_max=%.2f e2e_ms=%.2f rss_mib=%.0f weights_mib=%.0f core=%s enc_cpu_ms=%.2f prompt_cpu_ms=%.2f" %
          ("" if args.dtype == "fp32" else "_bf16", args.config, args.threads, 1e3 * statistics.median(te), 1e3 * min(te), 1e3 * max(te),
           1e3 * statistics.median(tp), 1e3 * min(tp), 1e3 * max(tp), 1e3 * statistics.median(tt), peak, weights,
           core, 1e3 * statistics.median(ce), 1e3 * statistics.median(cp)))


if __name__ == "__main__":
    main()
