#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the official SAM 2 image predictor on one image and a list of prompts
and write a parity dump (the parity dump format read by parity/dump.c, image task).

Example (tiny random model, see tools/README.md for more):
  SAM2_SRC=/work/sam2src /usr/bin/python3 tools/dump_sam2.py \
      --sam2-commit 2b90b9f5ceec907a1c18123530e92e794ad901a4 \
      --config sam2.1_hiera_t --set model.image_size=128 ... --seed 1 \
      --image-size 200x300 \
      --prompt "points=40,50,1;200,120,0" --prompt "box=20,30,250,180 multimask=0" \
      --variant tiny --out tiny.h5 --compress

Prompt syntax (one --prompt per prompt, run in order on one embedding):
  space-separated fields, all optional:
    points=x,y,label;x,y,label   original-image pixels (floats ok); label 1/0
    box=x0,y0,x1,y1              original-image pixels
    multimask=1|0                predict(multimask_output=...), default 1
    mask=prev|rand               mask_input [1,S/4,S/4]: `prev` = the previous
                                 prompt's returned low_res_masks channel with
                                 the highest IoU; `rand` = seeded smooth
                                 random logits
"""

import argparse
import json
import shlex
import sys

import numpy as np
import torch

import sam2_build
from parity_trace import Tracer, Writer, set_attr, set_str_attr, to_array
from synth_image import parse_hw, synth_image


# --------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------

def _floats(text, n=None):
    vals = [float(v) for v in text.split(",")]
    if n is not None and len(vals) != n:
        raise SystemExit(f"expected {n} numbers: {text!r}")
    return vals


def parse_prompt(text):
    p = {"points": [], "labels": [], "box": None, "multimask": True, "mask": None}
    for field in text.split():
        key, eq, val = field.partition("=")
        if not eq:
            raise SystemExit(f"prompt field {field!r}: expected key=value")
        if key == "points":
            for item in val.split(";"):
                x, y, label = _floats(item, 3)
                p["points"].append((x, y))
                p["labels"].append(int(label))
        elif key == "box":
            p["box"] = _floats(val, 4)
        elif key == "multimask":
            p["multimask"] = val.lower() in ("1", "true", "yes")
        elif key == "mask":
            if val not in ("prev", "rand"):
                raise SystemExit(f"mask={val}: use prev or rand")
            p["mask"] = val
        else:
            raise SystemExit(f"unknown prompt field {key!r}")
    return p


def random_mask_logits(size, seed):
    """Smooth random logits [1, size, size]: a sum of signed Gaussian blobs
    with an offset, so that both signs and a real boundary are present."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    m = np.full((size, size), -2.0)
    for _ in range(6):
        cy, cx = rng.uniform(0, size, 2)
        r = rng.uniform(0.08, 0.3) * size
        m += rng.uniform(-6, 10) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
    return m[None].astype(np.float32)


def mask_for_prompt(p, k, previous, size, seed):
    if p["mask"] is None:
        return None
    if p["mask"] == "rand":
        return random_mask_logits(size, seed * 1000 + k)
    if previous is None:
        raise SystemExit(f"prompt {k}: mask=prev needs a previous prompt")
    low, iou = previous["low_res_masks"], previous["iou_predictions"]
    return low[int(np.argmax(iou))][None].copy()


# --------------------------------------------------------------------------
# Tracing
# --------------------------------------------------------------------------

def parity_point_names(model):
    trunk = model.image_encoder.trunk
    layers = model.sam_mask_decoder.transformer.layers
    return (["image_encoder.trunk.patch_embed"]
            + [f"image_encoder.trunk.blocks.{i}" for i in range(len(trunk.blocks))]
            + ["image_encoder.trunk", "image_encoder.neck", "image_encoder",
               "sam_prompt_encoder"]
            + [f"sam_mask_decoder.transformer.layers.{i}" for i in range(len(layers))]
            + ["sam_mask_decoder.transformer", "sam_mask_decoder"])


class TracedTransforms:
    """Stands in for predictor._transforms (SAM2Transforms defines __call__
    on its class, so it cannot be wrapped per instance).  Records
    @preprocess (out/0 with the batch dim set_image adds) and @postprocess."""

    def __init__(self, inner, tracer):
        self._inner = inner
        self._pre = tracer.wrap_callable(inner.__call__, "@preprocess", "SAM2Transforms",
                                         out_transform=lambda t: t[None])
        self.postprocess_masks = tracer.wrap_callable(
            inner.postprocess_masks, "@postprocess", "SAM2Transforms")

    def __call__(self, image):
        return self._pre(image)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def install_tracing(predictor, full):
    tracer = Tracer()
    model = predictor.model
    modules = dict(model.named_modules())
    names = [n for n in modules if n] if full else parity_point_names(model)
    for name in names:
        tracer.wrap_module(name, modules[name])
    predictor._transforms = TracedTransforms(predictor._transforms, tracer)
    return tracer


def watch_dynamic_multimask(decoder, notes):
    """Note the stability score and the choice of the dynamic fallback
    (written as extra attrs on /outputs/<k>; the dump format ignores them)."""
    orig = decoder._dynamic_multimask_via_stability

    def wrapper(all_mask_logits, all_iou_scores):
        result = orig(all_mask_logits, all_iou_scores)
        score = decoder._get_stability_scores(all_mask_logits[:, 0:1]).flatten()[0]
        notes.append({
            "note_stability_score": float(score),
            "note_dynamic_fallback": int(score < decoder.dynamic_multimask_stability_thresh),
            "note_best_multimask": int(torch.argmax(all_iou_scores[0, 1:])),
        })
        return result

    decoder._dynamic_multimask_via_stability = wrapper


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def load_image(args):
    if args.image:
        from PIL import Image
        return np.array(Image.open(args.image).convert("RGB"))
    h, w = parse_hw(args.image_size)
    seed = args.seed if args.image_seed is None else args.image_seed
    return synth_image(h, w, seed)


def run_prompts(predictor, prompts, seed, notes):
    mask_size = predictor.model.image_size // 4
    results, previous = [], None
    for k, p in enumerate(prompts):
        mask = mask_for_prompt(p, k, previous, mask_size, seed)
        has_pts = bool(p["points"])
        n_notes = len(notes)
        masks, iou, low = predictor.predict(
            point_coords=np.array(p["points"], np.float32) if has_pts else None,
            point_labels=np.array(p["labels"], np.int32) if has_pts else None,
            box=np.array(p["box"], np.float32) if p["box"] is not None else None,
            mask_input=mask,
            multimask_output=p["multimask"],
            return_logits=True,
        )
        previous = {"masks": masks, "iou_predictions": iou, "low_res_masks": low,
                    "mask_input": mask, "notes": notes[n_notes:]}
        results.append(previous)
    return results


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def write_model(w, built, args):
    g = w.f.create_group("model")
    set_str_attr(g, "family", "sam2")
    set_str_attr(g, "variant", args.variant or args.config)
    set_str_attr(g, "config_json", built.config_json)
    set_str_attr(g, "source", built.source)
    set_str_attr(g, "torch_version", torch.__version__)
    g.attrs.create("seed", np.int64(args.seed))
    # provenance (not part of the contract)
    set_str_attr(g, "note_config_file", built.config_file)
    set_str_attr(g, "note_overrides", json.dumps(args.overrides))
    set_str_attr(g, "note_weights", args.checkpoint or f"random, seed {args.seed}")
    gw = w.f.create_group("weights")
    for key, t in built.model.state_dict().items():
        w.dataset(gw, key, to_array(t))


def effective_fill_areas(max_hole_area, max_sprinkle_area):
    """What SAM2Transforms.postprocess_masks really applied. The hole/sprinkle
    fill needs the sam2._C CUDA extension; without it the official code warns
    and skips the fill, so the areas it effectively used are 0."""
    try:
        from sam2 import _C  # noqa: F401
        return max_hole_area, max_sprinkle_area, ""
    except Exception as e:  # the official code catches any failure the same way
        if max_hole_area > 0 or max_sprinkle_area > 0:
            return 0.0, 0.0, f"fill requested but skipped by the official code: {e}"
        return 0.0, 0.0, ""


def write_inputs(w, image, prompts, results, fill=(0.0, 0.0, "")):
    g = w.f.create_group("inputs")
    set_str_attr(g, "task", "image")
    # samc extension (readers may ignore): the predictor's effective
    # max_hole_area / max_sprinkle_area, replayed by `samc parity`.
    g.attrs.create("max_hole_area", np.float64(fill[0]))
    g.attrs.create("max_sprinkle_area", np.float64(fill[1]))
    if fill[2]:
        set_str_attr(g, "note_fill", fill[2])
    w.dataset(g, "image_u8", image)
    gp = g.create_group("prompts")
    for k, (p, r) in enumerate(zip(prompts, results)):
        gk = gp.create_group(str(k))
        coords = np.array(p["points"], np.float32).reshape(-1, 2)
        w.dataset(gk, "point_coords", coords)
        w.dataset(gk, "point_labels", np.array(p["labels"], np.int32).reshape(-1))
        if p["box"] is not None:
            w.dataset(gk, "box", np.array(p["box"], np.float32))
        if r["mask_input"] is not None:
            w.dataset(gk, "mask_input", r["mask_input"].astype(np.float32))
        set_attr(gk, "multimask_output", bool(p["multimask"]))


def write_outputs(w, results):
    g = w.f.create_group("outputs")
    for k, r in enumerate(results):
        gk = g.create_group(str(k))
        for name in ("masks", "iou_predictions", "low_res_masks"):
            w.dataset(gk, name, r[name].astype(np.float32))
        for note in r["notes"]:
            for key, val in note.items():
                set_attr(gk, key, val)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    g = p.add_argument_group("run")
    g.add_argument("--image", help="RGB image file (PNG/JPEG)")
    g.add_argument("--image-size", default="200x300",
                   help="HxW of the seeded synthetic image when --image is not given")
    g.add_argument("--image-seed", type=int, help="seed of the synthetic image "
                   "(default: --seed)")
    g.add_argument("--prompt", action="append", default=[],
                   help="one prompt, see the syntax above (repeatable, in order)")
    g.add_argument("--max-hole-area", type=float, default=0.0)
    g.add_argument("--max-sprinkle-area", type=float, default=0.0)
    g.add_argument("--variant", help="free text for /model variant (default: --config)")
    g.add_argument("--full", action="store_true", help="record every module")
    g.add_argument("--compress", action="store_true", help="gzip datasets")
    g.add_argument("--out", required=True, help="output .h5")
    args = p.parse_args(argv)

    built = sam2_build.build_from_args(args)
    predictor = sam2_build.make_image_predictor(
        built.model, args.max_hole_area, args.max_sprinkle_area)
    tracer = install_tracing(predictor, args.full)
    notes = []
    watch_dynamic_multimask(built.model.sam_mask_decoder, notes)

    image = load_image(args)
    h, w = image.shape[:2]
    default = [f"points={w / 2},{h / 2},1"]  # one positive click at the centre
    prompts = [parse_prompt(t) for t in (args.prompt or default)]
    with torch.no_grad():
        predictor.set_image(image)
        results = run_prompts(predictor, prompts, args.seed, notes)

    w = Writer(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    write_model(w, built, args)
    write_inputs(w, image, prompts, results,
                 effective_fill_areas(args.max_hole_area, args.max_sprinkle_area))
    write_outputs(w, results)
    w.trace(tracer.records)
    w.close()
    for k, r in enumerate(results):
        print(f"prompt {k}: iou {np.round(r['iou_predictions'], 4).tolist()} "
              f"mask>0 {[round(float((m > 0).mean()), 3) for m in r['masks']]} "
              f"{r['notes']}")
    print(f"wrote {args.out}: {len(tracer.records)} trace records")


if __name__ == "__main__":
    main()
