#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the official SAM 3 image model through Sam3Processor on one image and a
list of prompts, and write a parity dump (the parity dump format read by parity/dump.c,
"SAM 3", task sam3_image).

Example (tiny random model; tools/make_fixtures.sh has the real commands):
  /usr/bin/python3 tools/dump_sam3.py --sam3-src /work/ext/sam3 \\
      --sam3-commit 99d02f28c8d34610ab35559b72642b01f10fdb1e --ftfy-src /work/ext/ftfy \\
      --set backbone.visual.trunk.embed_dim=32 ... --seed 1 --image-size 200x260 \\
      --prompt "text=a red car" --prompt "box=0.5,0.5,0.3,0.4,1;box=0.2,0.3,0.1,0.1,0" \\
      --threshold 0.3 --variant tiny --out tiny.h5

Prompt syntax (one --prompt per processor session, run in order on the one
image; fields separated by ';'):
  text=WORDS              set_text_prompt(WORDS): everything up to the next ';',
                          spaces kept
  textjson="..."          the same, the text given as a JSON string (may hold ';')
  box=cx,cy,w,h,label     one add_geometric_prompt([cx,cy,w,h], label == 1), in order;
                          normalised centre-x, centre-y, width, height; label 1 / 0
Each session: reset_all_prompts; set_text_prompt if a text is given; then one
add_geometric_prompt per box (the official code uses the text "visual" when
no text was set).
"""

import argparse
import json
import shlex
import sys
import time
import resource

import numpy as np
import torch

import sam3_build
import sam3_shims
from parity_trace import (NONE, LinkingWriter, Options, Tracer, set_attr, set_str_attr,
                          to_array)
from synth_image import parse_hw, synth_image

BOOL = np.int32          # the format page: boolean tensors are int32
OUT_KEYS = ("pred_logits", "pred_boxes", "pred_masks", "presence_logit_dec")


# --------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------

def _fields(text):
    """Split 'k=v;k=v' where a textjson value is a JSON string that may hold
    ';' (it is read with the JSON decoder)."""
    pos, n = 0, len(text)
    while pos < n:
        while pos < n and text[pos] in "; ":
            pos += 1
        if pos >= n:
            break
        eq = text.find("=", pos)
        if eq < 0:
            raise SystemExit(f"prompt field {text[pos:]!r}: expected key=value")
        key = text[pos:eq].strip()
        if key == "textjson":
            val, end = json.JSONDecoder().raw_decode(text, eq + 1)
            if end < n and text[end] != ";":
                raise SystemExit(f"textjson: ';' expected after the JSON string in {text!r}")
            pos = end + 1
        else:
            end = text.find(";", eq + 1)
            end = n if end < 0 else end
            val, pos = text[eq + 1:end], end + 1
        yield key, val


def parse_prompt(text):
    p = {"text": None, "boxes": [], "labels": [], "spec": text}
    for key, val in _fields(text):
        if key in ("text", "textjson"):
            if not isinstance(val, str):
                raise SystemExit(f"{key}: not a string")
            p["text"] = val
        elif key == "box":
            vals = [float(v) for v in val.split(",")]
            if len(vals) != 5 or vals[4] not in (0.0, 1.0):
                raise SystemExit(f"box={val}: expected cx,cy,w,h,label (label 0 or 1)")
            # the processor turns the floats into float32 (torch.tensor(box,
            # dtype=float32)); store and pass those exact values
            p["boxes"].append([float(np.float32(v)) for v in vals[:4]])
            p["labels"].append(int(vals[4]))
        else:
            raise SystemExit(f"unknown prompt field {key!r}")
    if p["text"] is None and not p["boxes"]:
        raise SystemExit(f"prompt {text!r}: needs a text or a box")
    return p


# --------------------------------------------------------------------------
# Tracing
# --------------------------------------------------------------------------

def parity_point_names(model):
    vb = "backbone.vision_backbone"
    lb = "backbone.language_backbone"
    names = [f"{vb}.trunk.patch_embed"]
    names += [f"{vb}.trunk.blocks.{i}" for i in range(len(model.backbone.vision_backbone.trunk.blocks))]
    names += [f"{vb}.trunk"]
    names += [f"{vb}.convs.{i}" for i in range(len(model.backbone.vision_backbone.convs))]
    names += [vb]
    nres = len(model.backbone.language_backbone.encoder.transformer.resblocks)
    names += [f"{lb}.encoder.transformer.resblocks.{i}" for i in range(nres)]
    names += [f"{lb}.encoder", lb]
    names += [f"geometry_encoder.encode.{i}" for i in range(len(model.geometry_encoder.encode))]
    names += ["geometry_encoder"]
    names += [f"transformer.encoder.layers.{i}" for i in range(len(model.transformer.encoder.layers))]
    names += ["transformer.encoder"]
    names += [f"transformer.decoder.layers.{i}" for i in range(len(model.transformer.decoder.layers))]
    names += ["transformer.decoder", "dot_prod_scoring", "segmentation_head.pixel_decoder",
              "segmentation_head"]
    return names


PROMPT_FIELDS = ("box_embeddings", "box_mask", "box_labels", "point_embeddings", "point_mask",
                 "point_labels", "mask_embeddings", "mask_mask", "mask_labels")


def expand_prompt(obj):
    """geometry_encoder receives a Prompt: its fields become in-slots
    geo_prompt.<field> (the format's convention)."""
    from sam3.model.geometry_encoders import Prompt
    if isinstance(obj, Prompt):
        return {f: getattr(obj, f) for f in PROMPT_FIELDS}
    return None


class TracedTransform:
    """Stands in for Sam3Processor.transform (a v2.Compose called as
    transform(chw_uint8)).  Records @preprocess: in/0 the uint8 image
    [H, W, 3] (the CHW tensor set_image passes, as HWC), out/0 the result
    with the batch dimension set_image adds, [1, 3, R, R]."""

    def __init__(self, inner, tracer):
        self._inner, self._tracer = inner, tracer

    def __call__(self, image):
        inp = to_array(image.permute(1, 2, 0))
        out = self._inner(image)
        self._tracer.add("@preprocess", "Sam3Processor", [("0", inp)],
                         [("0", to_array(out.unsqueeze(0)))])
        return out

    def __getattr__(self, name):
        return getattr(self._inner, name)


class TracedTokenizer:
    """Stands in for VETextEncoder.tokenizer (SimpleTokenizer defines
    __call__ on its class).  Records @tokenize: in attr 0 = the text (the
    official call passes a one-element list), attr context_length; out/0 the
    token ids [1, L] int64."""

    def __init__(self, inner, tracer):
        self._inner, self._tracer = inner, tracer
        self.texts = []

    def __call__(self, texts, context_length=None):
        result = self._inner(texts, context_length=context_length)
        one = [texts] if isinstance(texts, str) else list(texts)
        if len(one) != 1:
            raise SystemExit(f"@tokenize: expected one text per call, got {one!r}")
        inputs = [("0", one[0]), ("context_length",
                                   NONE if context_length is None else np.int64(context_length))]
        self._tracer.add("@tokenize", "SimpleTokenizer", inputs, [("0", to_array(result))])
        self.texts.append(one[0])
        return result

    def __getattr__(self, name):
        return getattr(self._inner, name)


def trace_postprocess(processor, tracer, calls):
    """Wrap Sam3Processor._forward_grounding: the model outputs it receives
    from forward_grounding are @postprocess's in-slots, what it stores in
    the state (scores, boxes, masks_logits) its out-slots."""
    orig = processor._forward_grounding
    model = processor.model

    def traced(state):
        inner = model.forward_grounding
        captured = {}

        def capture(*args, **kwargs):
            out = inner(*args, **kwargs)
            captured["raw"] = {k: out[k].detach().clone() for k in OUT_KEYS}
            return out

        model.forward_grounding = capture
        try:
            result = orig(state)
        finally:
            del model.forward_grounding
        raw = captured["raw"]
        inputs = [(k, to_array(raw[k], BOOL)) for k in OUT_KEYS]
        inputs += [("original_height", np.int64(state["original_height"])),
                   ("original_width", np.int64(state["original_width"])),
                   ("confidence_threshold", np.float64(processor.confidence_threshold))]
        outputs = [("scores", to_array(state["scores"])), ("boxes", to_array(state["boxes"])),
                   ("masks", to_array(state["masks_logits"]))]
        rec = tracer.add("@postprocess", "Sam3Processor", inputs, outputs)
        calls.append({"raw": raw, "record": rec, "threshold": processor.confidence_threshold,
                      "out": dict(outputs), "index": len(tracer.records) - 1})
        return result

    processor._forward_grounding = traced


def install_tracing(model, processor, full):
    tracer = Tracer(Options(bool_dtype=BOOL, expand=expand_prompt))
    modules = dict(model.named_modules())
    names = [n for n in modules if n] if full else parity_point_names(model)
    for name in names:
        tracer.wrap_module(name, modules[name])
    processor.transform = TracedTransform(processor.transform, tracer)
    lb = model.backbone.language_backbone
    lb.tokenizer = TracedTokenizer(lb.tokenizer, tracer)
    calls = []
    trace_postprocess(processor, tracer, calls)
    return tracer, calls


# --------------------------------------------------------------------------
# Decision margins
# --------------------------------------------------------------------------

def decision_margins(call):
    """The keep decision `score > threshold` for every query: scores
    recomputed exactly as the processor does (float32), the smallest
    distance to the threshold (absolute and relative)."""
    raw, t = call["raw"], call["threshold"]
    probs = (raw["pred_logits"].sigmoid() * raw["presence_logit_dec"].sigmoid().unsqueeze(1)
             ).squeeze(-1).flatten()
    keep = probs > t
    t32 = float(np.float32(t))
    d = (probs.double() - t32).abs()
    i = int(torch.argmin(d))
    masks = call["out"]["masks"]
    near = np.abs(masks.astype(np.float64) - 0.5)
    return {
        "kept": int(keep.sum()), "queries": int(probs.numel()),
        "score_min": float(probs.min()), "score_max": float(probs.max()),
        "presence": float(raw["presence_logit_dec"].flatten()[0]),
        "closest_score": float(probs[i]), "margin_abs": float(d[i]),
        "margin_rel": float(d[i]) / t32,
        "mask_min_dist_05": float(near.min()) if near.size else None,
        "mask_px_within_1e-4": int((near < 1e-4).sum()),
        "mask_px_within_1e-6": int((near < 1e-6).sum()),
    }


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def write_model(w, built, args, resolution):
    g = w.group(w.f, "model")
    set_str_attr(g, "family", "sam3")
    set_str_attr(g, "variant", args.variant or "sam3-random")
    set_str_attr(g, "config_json", built.config_json)
    set_str_attr(g, "source", built.source)
    set_str_attr(g, "torch_version", torch.__version__)
    g.attrs.create("seed", np.int64(args.seed))
    g.attrs.create("resolution", np.int64(resolution))
    w.dataset(g, "bpe_vocab_gz", np.frombuffer(sam3_build.read_bpe_bytes(built.bpe_path),
                                               dtype=np.uint8))
    # provenance (not part of the contract)
    set_str_attr(g, "note_overrides", json.dumps(args.overrides + args.new_overrides))
    set_str_attr(g, "note_weights", f"random, seed {args.seed} (tools/README.md, SAM 3 weights)")
    set_str_attr(g, "note_nudges", json.dumps(args.nudge))
    set_str_attr(g, "note_shims", json.dumps(sam3_shims.INSTALLED))
    set_str_attr(g, "note_ftfy_version", sam3_build.ftfy_version())
    gw = w.group(w.f, "weights")
    for key, t in built.model.state_dict().items():
        w.dataset(gw, key, to_array(t, BOOL))


def write_inputs(w, image, prompts, threshold):
    g = w.group(w.f, "inputs")
    set_str_attr(g, "task", "sam3_image")
    g.attrs.create("confidence_threshold", np.float64(threshold))
    w.dataset(g, "image_u8", image)
    gp = w.group(g, "prompts")
    for k, p in enumerate(prompts):
        gk = w.group(gp, str(k))
        if p["text"] is not None:
            set_str_attr(gk, "text", p["text"])
        w.dataset(gk, "box_cxcywh", np.array(p["boxes"], np.float32).reshape(-1, 4))
        w.dataset(gk, "box_labels", np.array(p["labels"], np.int32).reshape(-1))
        set_str_attr(gk, "note_prompt", p["spec"])


def write_outputs(w, prompts, results):
    g = w.group(w.f, "outputs")
    for k, r in enumerate(results):
        gk = w.group(g, str(k))
        out, raw = r["out"], r["raw"]
        w.dataset(gk, "scores", out["scores"])
        w.dataset(gk, "boxes", out["boxes"])
        w.dataset(gk, "masks", out["masks"].reshape((-1,) + out["masks"].shape[2:]))
        w.dataset(gk, "pred_logits", to_array(raw["pred_logits"][0, :, 0]))
        w.dataset(gk, "pred_boxes", to_array(raw["pred_boxes"][0]))
        w.dataset(gk, "presence_logit", to_array(raw["presence_logit_dec"].reshape(1)))
        w.dataset(gk, "pred_masks", to_array(raw["pred_masks"][0]))
        for key, val in r["margins"].items():
            set_attr(gk, "note_" + key.replace("-", "_"), NONE if val is None else val)
        set_attr(gk, "note_postprocess_record", np.int64(r["index"]))


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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam3_build.add_model_args(p)
    g = p.add_argument_group("run")
    g.add_argument("--image", help="RGB image file (PNG/JPEG)")
    g.add_argument("--image-size", default="200x260",
                   help="HxW of the seeded synthetic image when --image is not given")
    g.add_argument("--image-seed", type=int, help="seed of the synthetic image (default --seed)")
    g.add_argument("--prompt", action="append", default=[],
                   help="one processor session, syntax above (repeatable, in order)")
    g.add_argument("--threshold", type=float, default=0.5,
                   help="Sam3Processor confidence_threshold (default 0.5, as upstream)")
    g.add_argument("--resolution", type=int,
                   help="Sam3Processor resolution (default: the trunk's img_size)")
    g.add_argument("--min-margin", type=float, default=1e-4,
                   help="refuse to write when a score is within this relative distance of "
                   "the threshold (0 disables)")
    g.add_argument("--variant", help="free text for /model variant")
    g.add_argument("--full", action="store_true", help="record every module")
    g.add_argument("--compress", action="store_true", help="gzip datasets >= 64 KiB")
    g.add_argument("--out", required=True, help="output .h5")
    args = p.parse_args(argv)

    t0 = time.time()
    built = sam3_build.build_from_args(args)
    model = built.model
    trunk = built.tree["backbone"]["visual"]["trunk"]
    resolution = args.resolution or trunk["img_size"]
    from sam3.model.sam3_image_processor import Sam3Processor
    processor = Sam3Processor(model, resolution=resolution, device="cpu",
                              confidence_threshold=args.threshold)
    tracer, calls = install_tracing(model, processor, args.full)
    t_build = time.time() - t0

    from PIL import Image
    image = load_image(args)
    prompts = [parse_prompt(t) for t in (args.prompt or ["text=visual"])]
    results = []
    t1 = time.time()
    with torch.inference_mode():
        state = processor.set_image(Image.fromarray(image))
        t_image = time.time() - t1
        for k, pr in enumerate(prompts):
            processor.reset_all_prompts(state)
            n0 = len(calls)
            if pr["text"] is not None:
                processor.set_text_prompt(pr["text"], state)
            for box, label in zip(pr["boxes"], pr["labels"]):
                processor.add_geometric_prompt(box, bool(label), state)
            for c in calls[n0:]:
                c["prompt"] = k
                c["margins"] = decision_margins(c)
            results.append(calls[-1])
    t_prompts = time.time() - t1 - t_image

    worst = min(calls, key=lambda c: c["margins"]["margin_rel"])
    for c in calls:
        m = c["margins"]
        print(f"prompt {c['prompt']} call @postprocess#{c['record'].call}: kept {m['kept']}/"
              f"{m['queries']} scores [{m['score_min']:.4f}, {m['score_max']:.4f}] "
              f"presence {m['presence']:+.4f} threshold {c['threshold']} closest "
              f"{m['closest_score']:.6f} (rel margin {m['margin_rel']:.2e}); masks: min "
              f"|p-0.5| {m['mask_min_dist_05']}, px within 1e-4: {m['mask_px_within_1e-4']}")
    if args.min_margin > 0 and worst["margins"]["margin_rel"] < args.min_margin:
        raise SystemExit(f"a score is within {worst['margins']['margin_rel']:.2e} (relative) of "
                         f"the threshold {args.threshold}: choose another threshold or seed "
                         "(--min-margin 0 to write anyway)")

    w = LinkingWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    set_str_attr(w.f, "note_decision_margins", json.dumps(
        [{"prompt": c["prompt"], "record": c["index"], **c["margins"]} for c in calls]))
    write_model(w, built, args, resolution)
    write_inputs(w, image, prompts, args.threshold)
    write_outputs(w, prompts, results)
    w.trace(tracer.records)
    w.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    nparam = sum(t.numel() for t in model.state_dict().values())
    print(f"tokenized: {tracer_texts(model)}")
    print(f"wrote {args.out}: {len(tracer.records)} trace records ({w.links} hard links), "
          f"{nparam} weight elements; build {t_build:.1f} s, set_image {t_image:.2f} s, "
          f"prompts {t_prompts:.2f} s, peak RSS {peak:.0f} MB")


def tracer_texts(model):
    return model.backbone.language_backbone.tokenizer.texts


if __name__ == "__main__":
    main()
