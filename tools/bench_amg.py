#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Time the automatic mask generator: samc (fast) against the official
SAM2AutomaticMaskGenerator (PyTorch, CPU, fp32) on the same machine, in one
run, interleaved (samc, official, samc, official, ...), on the same model and
image; and the batched decoder's throughput in masks per second (B one-point
prompts in one pass, multimask, logits at the image size: samc's
samc_predictor_predict_batch against the official predictor._predict).

The model is sam2.1_hiera_t (or --config) at its real size with the seeded
random weights of tools/sam2_build.py, edited as dump_sam2_amg.py's
--structured-weights does so that masks pick whole shapes; the image is
dump_sam2_amg.py's flat shapes on grey at --size. samc reads the same
weights from a checkpoint this script writes. Thresholds are the official
defaults unless given (random weights predict IoUs below 0.8, so with the
defaults every candidate stops at the IoU filter: --pred-iou-thresh and
--stability-score-thresh make the rest of the pipeline run too).

  SAM2_SRC=/work/ext/sam2 /usr/bin/python3 tools/bench_amg.py --threads 2 --runs 2 \\
      --samc-bench /tmp/bench_amg     # tools/bench_amg.c, built against libsamc.a

Prints one RESULT line per measurement and a summary table (medians).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as samc bench and tools/bench_pytorch.py
import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import amg_env  # noqa: E402
import dump_sam2_amg  # noqa: E402
import sam2_build  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.add_argument("--samc-bench", required=True, help="the tools/bench_amg.c binary")
    p.add_argument("--impl", default="fast")
    p.add_argument("--device", default="cpu", help="where the official generator runs (cuda: the GPU, as samc's "
                   "--impl cuda; tools/cuda_device.sh)")
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--shapes", type=int, default=24)
    p.add_argument("--points-per-side", type=int, default=32)
    p.add_argument("--points-per-batch", type=int, default=64)
    p.add_argument("--pred-iou-thresh", type=float, default=0.8)
    p.add_argument("--stability-score-thresh", type=float, default=0.95)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--decoder-runs", type=int, default=3)
    return p.parse_args()


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def official_amg(gen, image):
    sync()
    t0, c0 = time.perf_counter(), time.process_time()
    with torch.no_grad():
        records = gen.generate(image)
    sync()
    return time.perf_counter() - t0, time.process_time() - c0, len(records)


def official_decoder(gen, image, batch, runs):
    """predictor._predict on `batch` grid points, as _process_batch calls it."""
    pred = gen.predictor
    h, w = image.shape[:2]
    i = np.arange(batch)
    pts = np.stack([w * ((i % 8) + 0.5) / 8, h * (((i // 8) % 8) + 0.5) / 8], 1).astype(np.float32)
    with torch.no_grad():
        pred.set_image(image)
        best = float("inf")
        for _ in range(runs):
            sync()
            t0 = time.perf_counter()
            p = pred._transforms.transform_coords(torch.as_tensor(pts), normalize=True, orig_hw=(h, w))
            masks, _, _ = pred._predict(p[:, None, :].to(pred.device),
                                        torch.ones(batch, 1, dtype=torch.int, device=pred.device),
                                        multimask_output=True, return_logits=True)
            sync()
            best = min(best, time.perf_counter() - t0)
    return masks.shape[1] * batch / best, best


def samc_run(args, ckpt, cfg, png):
    cmd = [args.samc_bench, ckpt, cfg, png, args.impl, str(args.threads), str(args.points_per_side),
           str(args.points_per_batch), str(args.decoder_runs), str(args.pred_iou_thresh),
           str(args.stability_score_thresh)]
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    amg = re.search(r"RESULT amg .* masks=(\d+) wall_s=([\d.]+) cpu_s=([\d.]+)", out)
    dec = re.search(r"RESULT decoder .* masks_per_s=([\d.]+)", out)
    return float(amg.group(2)), float(amg.group(3)), int(amg.group(1)), float(dec.group(1))


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    amg_env.prepare_torchvision()
    built = sam2_build.build_from_args(args)
    dump_sam2_amg.structure_weights(built.model)
    image = dump_sam2_amg.shapes_image(args.size, args.size, args.seed, args.shapes)
    params = dict(points_per_side=args.points_per_side, points_per_batch=args.points_per_batch,
                  pred_iou_thresh=args.pred_iou_thresh, stability_score_thresh=args.stability_score_thresh,
                  stability_score_offset=1.0, mask_threshold=0.0, box_nms_thresh=0.7, crop_n_layers=0,
                  crop_nms_thresh=0.7, crop_overlap_ratio=512 / 1500, crop_n_points_downscale_factor=1,
                  min_mask_region_area=0, output_mode="uncompressed_rle", use_m2m=False, multimask_output=True)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, device {args.device}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '')}, "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')}, {built.source}")
    rows = {"samc": [], "pytorch": []}
    with tempfile.TemporaryDirectory() as tmp:
        ckpt, cfg, png = (os.path.join(tmp, n) for n in ("model.pt", "config.json", "image.png"))
        torch.save({"model": built.model.state_dict()}, ckpt)
        gen = dump_sam2_amg.make_generator(built.model.to(args.device), params)
        with open(cfg, "w") as f:
            f.write(built.config_json)
        from PIL import Image
        Image.fromarray(image).save(png)
        for r in range(args.runs):
            wall, cpu, n, mps = samc_run(args, ckpt, cfg, png)
            rows["samc"].append((wall, cpu, n, mps))
            print(f"RESULT amg impl=samc_{args.impl} run={r} wall_s={wall:.2f} cpu_s={cpu:.2f} masks={n} "
                  f"decoder_masks_per_s={mps:.1f}", flush=True)
            wall, cpu, n = official_amg(gen, image)
            mps, _ = official_decoder(gen, image, args.points_per_batch, args.decoder_runs)
            rows["pytorch"].append((wall, cpu, n, mps))
            print(f"RESULT amg impl=pytorch run={r} wall_s={wall:.2f} cpu_s={cpu:.2f} masks={n} "
                  f"decoder_masks_per_s={mps:.1f}", flush=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n{args.config}, {args.size}x{args.size}, {args.points_per_side}^2 points, batch "
          f"{args.points_per_batch}, {args.threads} threads, {args.runs} interleaved runs (medians); "
          f"python peak RSS {rss:.0f} MiB")
    print("| impl | AMG wall s | AMG CPU s | masks | decoder masks/s (batch of %d) |" % args.points_per_batch)
    print("|---|---|---|---|---|")
    for k, v in rows.items():
        med = [statistics.median(x[i] for x in v) for i in range(4)]
        print(f"| {k} | {med[0]:.1f} | {med[1]:.1f} | {int(med[2])} | {med[3]:.0f} |")
    print(json.dumps({k: v for k, v in rows.items()}))


if __name__ == "__main__":
    main()
