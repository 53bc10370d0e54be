#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Time the official SAM 2 image predictor on a CUDA GPU, as samc's side
(`samc bench --impl cuda`, tools/cuda_device.sh) is timed:

  encoder (device)  forward_image + _prepare_backbone_features + no_mem_embed on
                    a preprocessed image already on the GPU: CUDA events around
                    the GPU work alone (samc's counterpart: SAMC_CUDA_TIMING)
  set_image         the predictor's set_image on the host image (its transforms
                    run on the CPU, then the upload), wall clock
  prompt -> masks   predict(one click, multimask, return_logits=True): the
                    masks at the image size, back on the host (numpy), wall clock

in one of three modes: fp32 (TF32 off: matmul and cuDNN), bf16 (autocast), or
compile (bf16 autocast, the image encoder through torch.compile; its compile
time is reported). Medians of --runs after --warmup; peak GPU memory
(torch.cuda.max_memory_allocated). One RESULT line at the end.

  SAM2_SRC=/path/to/sam2 python3 tools/bench_pytorch_gpu.py --config sam2.1_hiera_t --mode fp32
"""

import argparse
import contextlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    import sam2_build
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.add_argument("--mode", choices=["fp32", "bf16", "compile"], default="fp32")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--prompts", type=int, default=5, help="prompt -> masks: the best of this many per run")
    p.add_argument("--image", default="1200x900", help="WxH of the synthetic input image")
    return p.parse_args()


def main():
    args = parse_args()
    import numpy as np
    import torch
    import sam2_build
    from bench_pytorch import synth  # the same synthetic image as samc bench

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    built = sam2_build.build_from_args(args)
    model = built.model.cuda().eval()
    compile_s = 0.0
    if args.mode == "compile":
        model.image_encoder = torch.compile(model.image_encoder)
    pred = sam2_build.make_image_predictor(model)
    w, h = (int(v) for v in args.image.split("x"))
    img = synth(w, h)
    pt = np.array([[w * 0.45, h * 0.55]], np.float32)
    lab = np.array([1], np.int32)
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if args.mode != "fp32" else contextlib.nullcontext())
    x = pred._transforms(img)[None].cuda()
    dev = torch.cuda.get_device_name()
    print(f"pytorch {torch.__version__}, {dev}, mode {args.mode}, tf32 matmul {torch.backends.cuda.matmul.allow_tf32}, "
          f"model {args.config} (seed {args.seed} weights), image {w}x{h} -> {model.image_size}", flush=True)

    def encode(t):
        out = model.forward_image(t)
        _, feats, _, _ = model._prepare_backbone_features(out)
        if model.directly_add_no_mem_embed:
            feats[-1] = feats[-1] + model.no_mem_embed
        return feats

    enc, setimg, prompt = [], [], []
    with torch.inference_mode(), autocast:
        if args.mode == "compile":
            t0 = time.perf_counter()
            encode(x)
            torch.cuda.synchronize()
            compile_s = time.perf_counter() - t0
            print(f"  torch.compile: first call {compile_s:.1f} s", flush=True)
        torch.cuda.reset_peak_memory_stats()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for r in range(args.warmup + args.runs):
            e0.record()
            encode(x)
            e1.record()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            pred.set_image(img)
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            best = float("inf")
            for _ in range(args.prompts):
                q0 = time.perf_counter()
                pred.predict(point_coords=pt, point_labels=lab, multimask_output=True, return_logits=True)
                torch.cuda.synchronize()
                best = min(best, time.perf_counter() - q0)
            if r >= args.warmup:
                enc.append(e0.elapsed_time(e1)), setimg.append(1e3 * (t1 - t0)), prompt.append(1e3 * best)
    peak = torch.cuda.max_memory_allocated() / 2**20
    med = statistics.median
    print(f"  encoder (device) median {med(enc):8.2f} ms  min {min(enc):8.2f}  max {max(enc):8.2f}")
    print(f"  set_image        median {med(setimg):8.2f} ms")
    print(f"  prompt -> masks  median {med(prompt):8.2f} ms")
    print(f"  peak GPU memory {peak:.0f} MiB (torch.cuda.max_memory_allocated)")
    print(f"RESULT impl=pytorch_{args.mode} config={args.config} enc_gpu_ms={med(enc):.3f} enc_min={min(enc):.3f} "
          f"set_image_ms={med(setimg):.2f} prompt_ms={med(prompt):.3f} peak_mib={peak:.0f} compile_s={compile_s:.1f} "
          f"device=\"{dev}\"")


if __name__ == "__main__":
    main()
