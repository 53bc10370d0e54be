# SPDX-License-Identifier: Apache-2.0
"""Time per tracked frame of the official SAM2VideoPredictor (torch 1.13, CPU,
fp32), for comparison with tools/bench_video.c on the same machine and threads.

The clip mirrors bench_video.c: a textured background with a bright disc moving
across it, written as JPEG frames; one positive click on the disc in frame 0,
then propagate_in_video forward. Prints each propagated frame's time and the
mean over frames whose memory bank is full (frame >= 7).

  SAM2_SRC=... SAM2_COMMIT=... OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 \
      tools/bench_pytorch_video.py --config sam2.1_hiera_t --seed 0 --threads 2 --frames 12 --size 1024
"""
import argparse
import contextlib
import os
import sys
import tempfile
import time

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sam2_build  # noqa: E402


def write_clip(folder, n, size):
    yy, xx = np.mgrid[0:size, 0:size]
    for t in range(n):
        img = np.zeros((size, size, 3), np.uint8)
        img[..., 1] = (xx + 3 * t) % 256
        img[..., 2] = yy % 256
        cx, cy, r = size // 4 + t * size // 40, size // 2, size // 10
        disc = (xx - cx) ** 2 + (yy - cy) ** 2 < r * r
        img[disc] = (230, 40, 40)
        Image.fromarray(img).save(os.path.join(folder, f"{t:05d}.jpg"), quality=95)
    return size // 4, size // 2


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.add_argument("--frames", type=int, default=12)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: under torch.autocast('cpu', dtype=torch.bfloat16)")
    args = p.parse_args(argv)
    built = sam2_build.build_from_args(args, video=True)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}")
    autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if args.dtype == "bf16"
                else contextlib.nullcontext())
    with tempfile.TemporaryDirectory() as folder, torch.inference_mode(), autocast:
        cx, cy = write_clip(folder, args.frames, args.size)
        pred = built.model
        state = pred.init_state(video_path=folder)
        t0 = time.perf_counter()
        pred.add_new_points_or_box(state, frame_idx=0, obj_id=1, points=[[cx, cy]], labels=[1])
        print(f"prompt on frame 0: {1e3 * (time.perf_counter() - t0):.0f} ms")
        steady, last = [], time.perf_counter()
        for frame_idx, _, _ in pred.propagate_in_video(state):
            now = time.perf_counter()
            ms = 1e3 * (now - last)
            last = now
            print(f"frame {frame_idx}: {ms:.0f} ms")
            if frame_idx >= 7:
                steady.append(ms)
        if steady:
            print(f"mean over frames >= 7 (full memory bank): {np.mean(steady):.0f} ms per tracked frame")
            print(f"RESULT video impl=pytorch{'' if args.dtype == 'fp32' else '_bf16'} config={args.config} "
                  f"threads={args.threads} size={args.size} per_frame_ms={np.mean(steady):.1f}")


if __name__ == "__main__":
    main()
