#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the official SAM2AutomaticMaskGenerator on one image and write a parity
dump: the image task's layout (the parity dump format read by parity/dump.c) with
task = "amg", extended as docs/parity_amg.md describes (generator parameters,
the official records, every candidate mask with its decisions, the logits
behind each record, every NMS call).

Example (tiny random model; fixtures/README.md has the committed recipes):
  SAM2_SRC=/work/ext/sam2 /usr/bin/python3 tools/dump_sam2_amg.py \\
      --sam2-commit 2b90b9f5ceec907a1c18123530e92e794ad901a4 \\
      --config sam2.1_hiera_t --set model.image_size=128 ... --seed 9 \\
      --structured-weights --image-kind shapes --image-size 192x256 \\
      --points-per-side 4 --points-per-batch 8 --crop-n-layers 1 \\
      --pred-iou-thresh 0.1 --stability-score-thresh 0.05 --out amg.h5 --compress

The official code runs with output_mode="uncompressed_rle" whatever
--output-mode says: "binary_mask" is rle_to_mask of the same RLE, and
"coco_rle" needs pycocotools (not in Debian); the dump records the requested
mode and, for coco_rle, the strings of tools/coco_rle.py.
"""

import argparse
import shlex
import sys

import numpy as np
import torch

import amg_env
import sam2_build
import sam2_shims
from coco_rle import coco_string
from dump_sam2 import effective_fill_areas, install_tracing, write_model
from dump_sam2_video import VideoWriter
from parity_trace import set_attr, set_str_attr
from synth_image import parse_hw, synth_image


# --------------------------------------------------------------------------
# Inputs: image, weights
# --------------------------------------------------------------------------

def shapes_image(h, w, seed, n_shapes):
    """Flat-coloured disks and rectangles on grey, one per cell of a jittered
    grid, no noise or gradient: with random weights a mask then picks whole
    shapes (by colour) instead of spanning the image, and each crop of the
    first crop layer holds shapes away from its inner edges."""
    rng = np.random.RandomState(seed)
    img = np.full((h, w, 3), 128, np.uint8)
    cols = max(1, int(np.ceil(np.sqrt(n_shapes * w / h))))
    rows = int(np.ceil(n_shapes / cols))
    ch, cw = h / rows, w / cols
    yy, xx = np.mgrid[0:h, 0:w]
    for k in range(n_shapes):
        colour = rng.randint(0, 256, 3)
        cy = (k // cols + 0.5 + rng.uniform(-0.15, 0.15)) * ch
        cx = (k % cols + 0.5 + rng.uniform(-0.15, 0.15)) * cw
        r = rng.uniform(0.2, 0.32) * min(ch, cw)
        if k % 2 == 0:
            img[(yy - cy) ** 2 + (xx - cx) ** 2 < r * r] = colour
        else:
            img[(abs(yy - cy) < r) & (abs(xx - cx) < 1.3 * r)] = colour
    return img


def load_image(args):
    if args.image:
        from PIL import Image
        return np.array(Image.open(args.image).convert("RGB"))
    h, w = parse_hw(args.image_size)
    seed = args.seed if args.image_seed is None else args.image_seed
    if args.image_kind == "shapes":
        return shapes_image(h, w, seed, args.image_shapes)
    return synth_image(h, w, seed)


def structure_weights(model):
    """Two edits after the seeded draw (documented in docs/parity_amg.md):
    the trunk's absolute position embeddings are set to 0 (random ones give
    every location its own random feature, so every mask is a speckle
    spanning the image), and each 2x2 ConvTranspose2d of the mask decoder's
    output_upscaling gets one tap repeated (the mean of its four), which
    removes the period-4 checkerboard random transposed convolutions print on
    the low-res logits. /weights holds the edited values."""
    with torch.no_grad():
        trunk = model.image_encoder.trunk
        trunk.pos_embed.zero_()
        trunk.pos_embed_window.zero_()
        for m in model.sam_mask_decoder.output_upscaling:
            if isinstance(m, torch.nn.ConvTranspose2d):
                m.weight.copy_(m.weight.mean(dim=(2, 3), keepdim=True).expand_as(m.weight))


# --------------------------------------------------------------------------
# The generator and what is recorded around it
# --------------------------------------------------------------------------

PARAMS = ("points_per_side", "points_per_batch", "pred_iou_thresh", "stability_score_thresh",
          "stability_score_offset", "mask_threshold", "box_nms_thresh", "crop_n_layers",
          "crop_nms_thresh", "crop_overlap_ratio", "crop_n_points_downscale_factor",
          "min_mask_region_area", "output_mode", "use_m2m", "multimask_output")


def generator_params(args):
    p = {k: getattr(args, k) for k in PARAMS}
    if args.point_grids:
        import json
        with open(args.point_grids) as f:
            p["point_grids"] = [np.array(g, np.float64).reshape(-1, 2) for g in json.load(f)]
        p["points_per_side"] = None
    return p


def make_generator(model, params):
    from sam2.automatic_mask_generator import SAM2AutomaticMaskGenerator
    kw = dict(params)
    kw["output_mode"] = "uncompressed_rle"  # see the module docstring
    if params["min_mask_region_area"] > 0:
        sam2_shims.install_connected_components()  # the CPU stand-in of sam2._C
    gen = SAM2AutomaticMaskGenerator(model, **kw)
    s = model.image_size  # as sam2_build.make_image_predictor: sizes for image_size S
    gen.predictor._bb_feat_sizes = [(s // 4, s // 4), (s // 8, s // 8), (s // 16, s // 16)]
    return gen


class Recorder:
    """Wraps the generator's steps to keep what the dump needs: per crop and
    batch the points and the predictor outputs, every batched_nms call, and
    the crop/batch context of each trace record."""

    def __init__(self, gen, tracer, max_crops=None):
        import sam2.automatic_mask_generator as amg_module
        self.crops, self.batches, self.nms_calls = [], [], []
        self.ctx = {"crop_index": -1, "batch_index": -1}
        self._wrap_steps(gen)
        self._wrap_nms(amg_module)
        if tracer is not None:
            self._wrap_tracer(tracer, max_crops)

    def _wrap_steps(self, gen):
        process_crop, process_batch, predict = gen._process_crop, gen._process_batch, \
            gen.predictor._predict

        def crop_step(image, crop_box, layer_idx, orig_size):
            self.ctx = {"crop_index": len(self.crops), "batch_index": -1}
            self.crops.append({"box": list(crop_box), "layer": layer_idx})
            return process_crop(image, crop_box, layer_idx, orig_size)

        def batch_step(points, im_size, crop_box, orig_size, normalize=False):
            self.ctx = dict(self.ctx, batch_index=len(self.batches))
            self.batches.append({"crop_index": self.ctx["crop_index"], "points": points.copy(),
                                 "predict": []})
            return process_batch(points, im_size, crop_box, orig_size, normalize)

        def predict_step(*a, **k):
            out = predict(*a, **k)
            self.batches[-1]["predict"].append([t.detach().clone() for t in out])
            return out

        gen._process_crop, gen._process_batch = crop_step, batch_step
        gen.predictor._predict = predict_step

    def wrap_fill(self, transforms):
        """Count the pixels whose side of the predictor's threshold the
        hole/sprinkle fill changed (upscaled logits with and without it)."""
        import torch.nn.functional as F
        post = transforms.postprocess_masks
        self.fill_pixels = 0

        def post_step(masks, orig_hw):
            out = post(masks, orig_hw)
            plain = F.interpolate(masks.float(), orig_hw, mode="bilinear", align_corners=False)
            self.fill_pixels += int(((out > 0) != (plain > 0)).sum())
            return out

        transforms.postprocess_masks = post_step

    def _wrap_nms(self, amg_module):
        nms = amg_module.batched_nms

        def nms_step(boxes, scores, idxs, iou_threshold):
            keep = nms(boxes, scores, idxs, iou_threshold)
            self.nms_calls.append({"crop_index": self.ctx["crop_index"],
                                   "boxes": boxes.detach().clone(),
                                   "scores": scores.detach().clone(),
                                   "iou_threshold": float(iou_threshold), "keep": keep.clone()})
            return keep

        amg_module.batched_nms = nms_step

    def _wrap_tracer(self, tracer, max_crops):
        """Tag each record with its crop and batch; drop records of crops
        from max_crops on (recorded calls stay the first ones of each module,
        so trace numbering and call indices have no gaps)."""
        end = tracer._end

        def end_step(rec, result, out_transform=None):
            rec.ctx = dict(self.ctx)
            if max_crops is not None and self.ctx["crop_index"] >= max_crops:
                return None
            return end(rec, result, out_transform)

        tracer._end = end_step


# --------------------------------------------------------------------------
# Candidates: every mask the model returned, with the official decisions
# --------------------------------------------------------------------------

def batch_candidates(batch, crop, params, orig_hw):
    """One batch as _process_batch sees it, decisions made by the official
    functions on the recorded predictor outputs."""
    from sam2.utils.amg import (batched_mask_to_box, calculate_stability_score,
                                is_box_near_crop_edge)
    masks, ious, _ = batch["predict"][0]
    n_per = masks.shape[1]
    points = torch.as_tensor(batch["points"], dtype=torch.float32).repeat_interleave(n_per, 0)
    logits, iou = masks.flatten(0, 1), ious.flatten(0, 1)
    if params["use_m2m"]:  # refine_with_m2m: one more predict per sub-batch, single mask
        logits = torch.cat([p[0] for p in batch["predict"][1:]], 0).squeeze(1)
        iou = torch.cat([p[1] for p in batch["predict"][1:]], 0).squeeze(1)
    keep_iou = iou > params["pred_iou_thresh"] if params["pred_iou_thresh"] > 0 else \
        torch.ones_like(iou, dtype=torch.bool)
    stab = calculate_stability_score(logits, params["mask_threshold"],
                                     params["stability_score_offset"])
    keep_stab = stab >= params["stability_score_thresh"] if params["stability_score_thresh"] > 0 \
        else torch.ones_like(stab, dtype=torch.bool)
    boxes = batched_mask_to_box(logits > params["mask_threshold"])
    near = is_box_near_crop_edge(boxes, crop["box"], [0, 0, orig_hw[1], orig_hw[0]])
    return {"logits": logits, "iou": iou, "points": points, "stability": stab,
            "keep_iou": keep_iou, "keep_stability": keep_iou & keep_stab, "box": boxes,
            "near_edge": near}


def all_candidates(rec, params, orig_hw):
    parts = []
    for b_idx, batch in enumerate(rec.batches):
        c = batch_candidates(batch, rec.crops[batch["crop_index"]], params, orig_hw)
        c["crop_index"] = torch.full((len(c["iou"]),), batch["crop_index"], dtype=torch.int64)
        c["batch_index"] = torch.full((len(c["iou"]),), b_idx, dtype=torch.int64)
        parts.append(c)
    # logits differ in size between crops: a list of [h, w] tensors
    return {k: [t for p in parts for t in p[k]] if k == "logits" else
            torch.cat([p[k] for p in parts], 0) for k in parts[0]}


def nms_inputs(rec, cand):
    """Candidate index of every row given to each batched_nms call: a crop's
    call gets its candidates that passed the filters, in batch order; the
    crop-level call gets each crop's NMS survivors, crop after crop."""
    entering = cand["keep_stability"] & ~cand["near_edge"]
    survivors, rows = {}, []
    for call in rec.nms_calls:
        c = call["crop_index"]
        if len(rows) < len(rec.crops):  # one call per crop, then the crop-level one
            idx = torch.nonzero(entering & (cand["crop_index"] == c)).flatten()
            survivors[c] = idx[call["keep"]]
        else:
            idx = torch.cat([survivors[k] for k in range(len(rec.crops))])
        if len(idx) != len(call["boxes"]):
            raise SystemExit(f"NMS call {len(rows)}: {len(call['boxes'])} boxes, "
                             f"{len(idx)} candidates")
        rows.append(idx)
    final = rows[-1][rec.nms_calls[-1]["keep"]] if len(rec.crops) > 1 else survivors[0]
    return rows, final


def check_records(records, final, cand, crops, params, orig_hw):
    """Each official record equals its candidate: crop, point, IoU, mask."""
    from sam2.utils.amg import mask_to_rle_pytorch, uncrop_masks
    if len(records) != len(final):
        raise SystemExit(f"{len(records)} records, {len(final)} NMS survivors")
    for r_idx, (r, i) in enumerate(zip(records, final.tolist())):
        crop = crops[int(cand["crop_index"][i])]["box"]
        # uncrop_points: float32 + offset, one float32 rounding
        pt = np.float32([float(cand["points"][i][0]) + crop[0],
                         float(cand["points"][i][1]) + crop[1]]).tolist()
        m = uncrop_masks((cand["logits"][i] > params["mask_threshold"])[None], crop, *orig_hw)
        ok = ([crop[0], crop[1], crop[2] - crop[0], crop[3] - crop[1]] == r["crop_box"]
              and float(cand["iou"][i]) == r["predicted_iou"] and pt == r["point_coords"][0]
              and mask_to_rle_pytorch(m)[0]["counts"] == r["segmentation"]["counts"])
        if not ok:
            raise SystemExit(f"record {r_idx} does not match candidate {i}")


# --------------------------------------------------------------------------
# Margins: how far each decision is from its threshold
# --------------------------------------------------------------------------

def f32(v):
    """A Python-float threshold as torch compares it with a float32 tensor."""
    return float(np.float32(v))


def compared_ious(call):
    """IoUs of the pairs torchvision's kernel compares (stable descending
    visiting order; box_iou has the kernel's float32 steps), and its keep."""
    from torchvision.ops import box_iou
    boxes, thr = call["boxes"], call["iou_threshold"]
    order = torch.sort(call["scores"], stable=True, descending=True)[1].tolist()
    iou = box_iou(boxes, boxes)
    suppressed, keep, seen = set(), [], []
    for a, i in enumerate(order):
        if i in suppressed:
            continue
        keep.append(i)
        for j in order[a + 1:]:
            if j not in suppressed:
                seen.append(float(iou[i, j]))
                if float(iou[i, j]) > thr:  # the kernel compares in double
                    suppressed.add(j)
    if sorted(keep) != sorted(call["keep"].tolist()):
        raise SystemExit("NMS re-statement disagrees with torchvision")
    return seen


def margins(cand, rec, records, final, params):
    """Smallest |value - threshold| of every decision (NaN values excluded)."""
    out = {}
    if params["pred_iou_thresh"] > 0:
        out["pred_iou"] = float((cand["iou"] - f32(params["pred_iou_thresh"])).abs().min())
    st = cand["stability"][cand["keep_iou"] & ~torch.isnan(cand["stability"])]
    if params["stability_score_thresh"] > 0 and len(st):
        out["stability"] = float((st - f32(params["stability_score_thresh"])).abs().min())
    for k, call in enumerate(rec.nms_calls):
        ious = [v for v in compared_ious(call) if v == v]
        if ious:
            name = "crop_nms" if k >= len(rec.crops) else "box_nms"
            m = min(abs(v - call["iou_threshold"]) for v in ious)
            out[name] = min(out.get(name, 1.0), m)
    return out


def pixel_report(cand, final, params):
    """Pixels of the records' masks (and of the stability cuts) whose logit
    lies within 1e-4 / 1e-3 of the threshold; the harness excuses those."""
    mt, off = params["mask_threshold"], params["stability_score_offset"]
    rows = []
    for i in final.tolist():
        v = cand["logits"][i]
        d = (v - f32(mt)).abs()
        cuts = torch.minimum((v - f32(mt + off)).abs(), (v - f32(mt - off)).abs())
        rows.append((int((d < 1e-4).sum()), int((d < 1e-3).sum()), float(d.min()),
                     int((cuts < 1e-4).sum())))
    return rows


# --------------------------------------------------------------------------
# Writing (docs/parity_amg.md)
# --------------------------------------------------------------------------

def write_inputs(w, image, params, gen, fill):
    g = w.f.create_group("inputs")
    set_str_attr(g, "task", "amg")
    w.dataset(g, "image_u8", image)
    for k in PARAMS:
        set_attr(g, k, params[k])  # points_per_side None -> NULL attribute
    # the predictor's effective hole/sprinkle areas (min_mask_region_area, or 0
    # when the official code skipped the fill), as the image task's extension
    g.attrs.create("max_hole_area", np.float64(fill[0]))
    g.attrs.create("max_sprinkle_area", np.float64(fill[1]))
    gg = g.create_group("point_grids")
    for i, grid in enumerate(gen.point_grids):
        gg.create_dataset(str(i), data=np.asarray(grid, np.float64).reshape(-1, 2))


def write_records(w, g, records, params):
    counts = [r["segmentation"]["counts"] for r in records]
    offsets = np.cumsum([0] + [len(c) for c in counts]).astype(np.int64)
    g.attrs.create("num_masks", np.int64(len(records)))
    h, w_ = records[0]["segmentation"]["size"] if records else (0, 0)
    w.dataset(g, "segmentation_size", np.array([h, w_], np.int64))
    w.dataset(g, "segmentation_counts", np.array([c for cs in counts for c in cs], np.int64))
    w.dataset(g, "segmentation_offsets", offsets)
    if params["output_mode"] == "coco_rle":
        from parity_trace import STR
        g.create_dataset("segmentation_coco", data=[coco_string(c) for c in counts], dtype=STR)
    w.dataset(g, "area", np.array([r["area"] for r in records], np.int64))
    for key in ("bbox", "crop_box"):
        w.dataset(g, key, np.array([r[key] for r in records], np.float32).reshape(-1, 4))
    w.dataset(g, "point_coords",
              np.array([r["point_coords"][0] for r in records], np.float32).reshape(-1, 2))
    for key in ("predicted_iou", "stability_score"):
        w.dataset(g, key, np.array([r[key] for r in records], np.float32))


def write_candidates(w, g, cand, final):
    gc = g.create_group("candidates")
    n = len(cand["iou"])
    record_index = np.full(n, -1, np.int64)
    record_index[final.numpy()] = np.arange(len(final))
    w.dataset(gc, "crop_index", cand["crop_index"].numpy())
    w.dataset(gc, "batch_index", cand["batch_index"].numpy())
    w.dataset(gc, "point_coords", cand["points"].numpy().astype(np.float32))
    w.dataset(gc, "predicted_iou", cand["iou"].numpy().astype(np.float32))
    w.dataset(gc, "stability_score", cand["stability"].numpy().astype(np.float32))
    for key in ("keep_iou", "keep_stability", "near_edge"):
        w.dataset(gc, key if key != "near_edge" else "near_crop_edge",
                  cand[key].numpy().astype(np.int32))
    w.dataset(gc, "box", cand["box"].numpy().astype(np.int64))
    w.dataset(gc, "record_index", record_index)
    # the logits each record was cut from, in its crop's frame, concatenated
    flat = [cand["logits"][i].numpy().ravel() for i in final.tolist()]
    offsets = np.cumsum([0] + [len(f) for f in flat]).astype(np.int64)
    w.dataset(g, "mask_logits", np.concatenate(flat).astype(np.float32) if flat
              else np.zeros(0, np.float32))
    w.dataset(g, "mask_logits_offsets", offsets)


def write_outputs(w, records, cand, final, rec, rows, params):
    g = w.f.create_group("outputs")
    write_records(w, g, records, params)
    write_candidates(w, g, cand, final)
    gk = g.create_group("crops")
    w.dataset(gk, "box", np.array([c["box"] for c in rec.crops], np.int64).reshape(-1, 4))
    w.dataset(gk, "layer", np.array([c["layer"] for c in rec.crops], np.int64))
    gn = g.create_group("nms")
    for k, (call, idx) in enumerate(zip(rec.nms_calls, rows)):
        gi = gn.create_group(str(k))
        gi.attrs.create("iou_threshold", np.float64(call["iou_threshold"]))
        gi.attrs.create("crop_index", np.int64(call["crop_index"] if k < len(rec.crops) else -1))
        w.dataset(gi, "boxes", call["boxes"].numpy().astype(np.float32).reshape(-1, 4))
        w.dataset(gi, "scores", call["scores"].numpy().astype(np.float32))
        w.dataset(gi, "keep", call["keep"].numpy().astype(np.int64))
        w.dataset(gi, "candidates", idx.numpy().astype(np.int64))


def write_trace(w, tracer):
    """The video tool's writer stores a tensor identical to one already in
    /trace as a hard link (a layer's output is the next one's input; the
    image embedding is repeated per batch); then the crop/batch attrs."""
    for r in tracer.records:
        r.attrs = {}  # VideoWriter.trace looks for frame_idx / obj_id there
    w.trace(tracer.records)
    root = w.f["trace"]
    for i, r in enumerate(tracer.records):
        ctx = getattr(r, "ctx", {"crop_index": -1, "batch_index": -1})
        for key, val in ctx.items():
            root[f"{i:06d}"].attrs.create(key, np.int64(val))


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

def add_generator_args(p):
    g = p.add_argument_group("generator (SAM2AutomaticMaskGenerator, official defaults)")
    g.add_argument("--points-per-side", type=int, default=32)
    g.add_argument("--point-grids", help="JSON list of grids [[x, y], ...] (one per crop "
                   "layer, normalised); replaces --points-per-side")
    g.add_argument("--points-per-batch", type=int, default=64)
    g.add_argument("--pred-iou-thresh", type=float, default=0.8)
    g.add_argument("--stability-score-thresh", type=float, default=0.95)
    g.add_argument("--stability-score-offset", type=float, default=1.0)
    g.add_argument("--mask-threshold", type=float, default=0.0)
    g.add_argument("--box-nms-thresh", type=float, default=0.7)
    g.add_argument("--crop-n-layers", type=int, default=0)
    g.add_argument("--crop-nms-thresh", type=float, default=0.7)
    g.add_argument("--crop-overlap-ratio", type=float, default=512 / 1500)
    g.add_argument("--crop-n-points-downscale-factor", type=int, default=1)
    g.add_argument("--min-mask-region-area", type=int, default=0)
    g.add_argument("--output-mode", default="binary_mask",
                   choices=("binary_mask", "uncompressed_rle", "coco_rle"))
    g.add_argument("--use-m2m", action="store_true")
    g.add_argument("--no-multimask", dest="multimask_output", action="store_false")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    add_generator_args(p)
    g = p.add_argument_group("run")
    g.add_argument("--image", help="RGB image file (PNG/JPEG)")
    g.add_argument("--image-size", default="96x128", help="HxW of the synthetic image")
    g.add_argument("--image-seed", type=int, help="seed of the synthetic image (default --seed)")
    g.add_argument("--image-kind", choices=("synth", "shapes"), default="synth",
                   help="synth_image.py, or flat shapes on grey (see shapes_image)")
    g.add_argument("--image-shapes", type=int, default=10, help="shapes of --image-kind shapes")
    g.add_argument("--structured-weights", action="store_true",
                   help="zero trunk position embeddings, checkerboard-free upscaling "
                   "(see structure_weights)")
    g.add_argument("--min-margin", type=float, default=1e-4,
                   help="fail when a decision lies closer than this to its threshold")
    g.add_argument("--allow-close", action="store_true", help="only warn about close decisions")
    g.add_argument("--no-trace", action="store_true", help="write no /trace")
    g.add_argument("--trace-crops", type=int, metavar="N",
                   help="record the trace of the first N crops only (default: all)")
    g.add_argument("--trace-postprocess", action="store_true",
                   help="also record @postprocess (large: [B, C, h, w] per batch)")
    g.add_argument("--full", action="store_true", help="record every module")
    g.add_argument("--variant", help="free text for /model variant (default: --config)")
    g.add_argument("--compress", action="store_true", help="gzip datasets")
    g.add_argument("--out", required=True, help="output .h5")
    return p.parse_args(argv)


def report(records, cand, final, rec, params, args):
    print(f"{len(rec.crops)} crops, {len(rec.batches)} batches, {len(cand['iou'])} candidates, "
          f"{int(cand['keep_iou'].sum())} pass pred_iou, {int(cand['keep_stability'].sum())} "
          f"pass stability, {int((cand['keep_stability'] & ~cand['near_edge']).sum())} away "
          f"from crop edges, {len(records)} records")
    for k, r in enumerate(records):
        print(f"  {k}: area {r['area']} bbox {r['bbox']} iou {r['predicted_iou']:.4f} "
              f"stability {r['stability_score']:.4f} crop {r['crop_box']}")
    m = margins(cand, rec, records, final, params)
    print("decision margins (|value - threshold|): " +
          ", ".join(f"{k} {v:.3g}" for k, v in m.items()))
    for k, (n4, n3, dmin, ncut) in enumerate(pixel_report(cand, final, params)):
        print(f"  record {k}: {n4} pixels within 1e-4 of mask_threshold ({n3} within 1e-3, "
              f"closest {dmin:.3g}); {ncut} within 1e-4 of the stability cuts")
    close = {k: v for k, v in m.items() if v < args.min_margin}
    if close:
        msg = f"decisions closer than {args.min_margin} to their thresholds: {close}"
        if not args.allow_close:
            raise SystemExit(msg + " (choose other thresholds, or --allow-close)")
        print("WARNING: " + msg)


def main(argv=None):
    args = parse_args(argv)
    amg_env.prepare_torchvision()
    built = sam2_build.build_from_args(args)
    if args.structured_weights:
        structure_weights(built.model)
    params = generator_params(args)
    gen = make_generator(built.model, params)
    tracer = None if args.no_trace else install_tracing(gen.predictor, args.full)
    if tracer is not None and not args.trace_postprocess:
        gen.predictor._transforms.postprocess_masks = \
            gen.predictor._transforms._inner.postprocess_masks
    rec = Recorder(gen, tracer, args.trace_crops)
    if params["min_mask_region_area"] > 0:
        rec.wrap_fill(gen.predictor._transforms)
    image = load_image(args)
    orig_hw = image.shape[:2]
    with torch.no_grad():
        records = gen.generate(image)
    cand = all_candidates(rec, params, orig_hw)
    rows, final = nms_inputs(rec, cand)
    check_records(records, final, cand, rec.crops, params, orig_hw)
    report(records, cand, final, rec, params, args)

    w = VideoWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    write_model(w, built, args)
    if args.structured_weights:
        set_str_attr(w.f["model"], "note_weights_edit", structure_weights.__doc__.strip())
    if args.trace_crops is not None:
        w.f.attrs.create("note_trace_crops", np.int64(args.trace_crops))
    fill = effective_fill_areas(params["min_mask_region_area"], params["min_mask_region_area"])
    write_inputs(w, image, params, gen, fill)
    if params["min_mask_region_area"] > 0:
        w.f["inputs"].attrs.create("note_fill_pixels", np.int64(rec.fill_pixels))
        print(f"the hole/sprinkle fill moved {rec.fill_pixels} upscaled pixels across 0")
    write_outputs(w, records, cand, final, rec, rows, params)
    if tracer is not None:
        write_trace(w, tracer)
    w.close()
    print(f"wrote {args.out}: {len(records)} masks, "
          f"{len(tracer.records) if tracer else 0} trace records")


if __name__ == "__main__":
    main()
