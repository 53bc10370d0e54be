#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run SAM 3's SAM-1 task (Sam3Image.predict_inst: point / box / mask prompts
through the tracker's SAM heads on one image) with the official code and
write a parity dump of task sam3_inst (docs/parity.md, "SAM 3 predict_inst";
tools/README.md, "dump_sam3_inst.py").

Example (tiny random model; tools/make_fixtures.sh has the real commands):
  /usr/bin/python3 tools/dump_sam3_inst.py --sam3-src /work/ext/sam3 \\
      --sam3-commit 99d02f28c8d34610ab35559b72642b01f10fdb1e --ftfy-src /work/ext/ftfy \\
      --set ... --tracker-set image_size=56 ... --seed 1 --image-size 60x90 \\
      --prompt "points=30,20,1" --prompt "box=10,5,70,50 multimask=0" \\
      --prompt "points=40,30,1;20,10,0 mask=prev multimask=0" --out tiny_inst.h5

Model: build_sam3_image_model(enable_inst_interactivity=True)'s tree (the
image model, its tracker neck sam2_convs and a SAM3InteractiveImagePredictor
around build_tracker(apply_temporal_disambiguation=False)); --set / --set-new
change the image tree, --tracker-set / --tracker-set-new the predictor's
tracker (inst_interactive_predictor.sam_model); the predictor's and the
tracker's constructor defaults are filled in.  Run: Sam3Processor.set_image
(PIL image), then per --prompt one model.predict_inst(state, point_coords,
point_labels, box, mask_input, multimask_output, return_logits=True).
Prompt syntax (dump_sam2.py's): points=x,y,l;x,y,l (pixels), box=x0,y0,x1,y1,
multimask=1|0 (default 1), mask=prev|rand (the previous prompt's best
low-res logits, or seeded smooth random logits, [1, 4G, 4G]).
"""

import argparse
import copy
import json
import os
import shlex
import sys

import numpy as np
import torch

import sam3_build
import sam3_shims
import sam3_video_config as vcfg
import sam3_video_shims
from dump_sam2 import mask_for_prompt, parse_prompt
from dump_sam3 import TracedTransform, load_image
from parity_trace import CompactLinkingWriter, set_attr, set_str_attr, to_array
from sam3_video_margins import Counters, Margins, rel_min_abs
from sam3_video_trace import BOOL, ScopeTracer, detector_point_names, tracker_point_names

INST = "inst_interactive_predictor"


def build_inst_model(args):
    sam3_build.fp32_cpu_settings(args.threads)
    root, pkg, mb = sam3_build.import_sam3(args.sam3_src, args.ftfy_src)
    source = "facebookresearch/sam3@" + sam3_build.source_commit(root, args.sam3_commit)
    bpe = os.path.abspath(args.bpe or os.path.join(root, sam3_build.BPE_REL))
    kw = dict(sam3_build.BUILD_IMAGE_KWARGS, enable_inst_interactivity=True)
    tree = sam3_build.record_tree(mb, "build_sam3_image_model", bpe_path=bpe, **kw)
    for o in args.overrides:
        sam3_build.apply_override(tree, o)
    for o in args.new_overrides:
        sam3_build.apply_override(tree, o, allow_new=True)
    for o in args.tracker_set:
        sam3_build.apply_override(tree, f"{INST}.sam_model." + o)
    for o in args.tracker_set_new:
        sam3_build.apply_override(tree, f"{INST}.sam_model." + o, allow_new=True)
    added = {INST: vcfg.fill_defaults(tree[INST], vcfg.INST_TARGET),
             f"{INST}.sam_model": vcfg.fill_defaults(tree[INST]["sam_model"], vcfg.TRACKER_TARGET)}
    sam3_video_shims.install(video=False)
    model = sam3_build.instantiate(copy.deepcopy(tree), bpe)
    sam3_build.randomize_weights(model, args.seed)
    sam3_build.apply_nudges(model, args.nudge)
    model = model.float().eval()
    return sam3_build.Built(model, tree, source, bpe), added


def released_key(key):
    """The image model's state_dict key as the released sam3.pt names it
    (model_builder._load_checkpoint maps tracker.* to
    inst_interactive_predictor.model.* and strips detector.)."""
    head = f"{INST}.model."
    return "tracker." + key[len(head):] if key.startswith(head) else "detector." + key


def install_tracing(model, processor, tracer, margins, counters, full):
    inst = model.inst_interactive_predictor
    det = dict(model.named_modules())
    trk = dict(inst.model.named_modules())
    if full:
        dnames = [n for n in det if n and not n.startswith(INST)]
        tnames = ["tracker." + n for n in trk if n]
    else:
        dnames = [n for n in detector_point_names(model) if n.startswith("backbone.vision_backbone")]
        tnames = [n for n in tracker_point_names(inst.model)
                  if "sam_mask_decoder" in n or "sam_prompt_encoder" in n]
    for n in dnames:
        tracer.wrap_module(n, det[n])
    for n in tnames:
        tracer.wrap_module(n, trk[n[len("tracker."):]])
    processor.transform = TracedTransform(processor.transform, tracer)

    real_predict = inst.predict

    def predict(*args, **kwargs):
        feats = inst._features
        tracer.add("@inst_features", "Sam3Image", [], tracer.flat(
            {"image_embed": to_array(feats["image_embed"]),
             "high_res_feats": [to_array(x) for x in feats["high_res_feats"]]}))
        return real_predict(*args, **kwargs)

    inst.predict = predict

    tf = inst._transforms
    real_post = tf.postprocess_masks

    def postprocess_masks(masks, orig_hw):
        out = real_post(masks, orig_hw)
        tracer.add("@postprocess", "SAM2Transforms",
                   [("0", to_array(masks)), ("1.0", np.int64(orig_hw[0])),
                    ("1.1", np.int64(orig_hw[1])), ("max_hole_area", np.float64(tf.max_hole_area)),
                    ("max_sprinkle_area", np.float64(tf.max_sprinkle_area)),
                    ("mask_threshold", np.float64(tf.mask_threshold))],
                   [("0", to_array(out))])
        if tf.max_hole_area > 0:
            from sam3.perflib.connected_components import connected_components
            flat = masks.float().flatten(0, 1).unsqueeze(1)
            labels, areas = connected_components((flat <= tf.mask_threshold).to(torch.uint8))
            holes = int(((labels > 0) & (areas <= tf.max_hole_area)).sum())
            counters.add("hole fill: low-res pixels filled", holes)
            margins.add("inst_binarise", rel_min_abs(masks.numpy()), f"@postprocess call "
                        f"{tracer._calls['@postprocess'] - 1}")
        return out

    tf.postprocess_masks = postprocess_masks

    dec = inst.model.sam_mask_decoder
    real_stab = dec._dynamic_multimask_via_stability

    def stab(all_mask_logits, all_iou_scores):
        sc = float(dec._get_stability_scores(all_mask_logits[:, 0:1]).reshape(-1)[0])
        thr = dec.dynamic_multimask_stability_thresh
        margins.add("stability", abs(sc - thr), f"predict_inst (stability {sc:.4f})")
        if sc < thr:
            iou = np.sort(all_iou_scores[0, 1:].numpy())[::-1]
            margins.add("iou_argmax", iou[0] - iou[1], "predict_inst (stability fallback)")
            counters.add("single-mask output: stability fallback to the best of tokens 1-3")
        else:
            counters.add("single-mask output: token 0 kept (stable)")
        return real_stab(all_mask_logits, all_iou_scores)

    dec._dynamic_multimask_via_stability = stab


def count_fill(results, counters):
    for r in results:
        counters.add("prompts with points", int(len(r["prompt"]["points"]) > 0))
        counters.add("prompts with a box", int(r["prompt"]["box"] is not None))
        counters.add("prompts with a mask input", int(r["mask_input"] is not None))
        counters.add("multimask outputs", int(r["prompt"]["multimask"]))


def write(args, built, added, image, prompts, results, tracer, margins, counters):
    w = CompactLinkingWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    set_str_attr(w.f, "note_margins", json.dumps(margins.summary()))
    set_str_attr(w.f, "note_counters", json.dumps(counters.as_dict()))
    g = w.group(w.f, "model")
    set_str_attr(g, "family", "sam3")
    set_str_attr(g, "variant", args.variant or "sam3-inst-random")
    set_str_attr(g, "config_json", built.config_json)
    set_str_attr(g, "source", built.source)
    set_str_attr(g, "torch_version", torch.__version__)
    g.attrs.create("seed", np.int64(args.seed))
    g.attrs.create("resolution", np.int64(built.tree["backbone"]["visual"]["trunk"]["img_size"]))
    set_str_attr(g, "code_constants_json", json.dumps(vcfg.code_constants(vcfg.INST_CONSTANTS)))
    set_str_attr(g, "note_builder", "build_sam3_image_model(eval_mode=True, checkpoint_path=None, "
                 "load_from_HF=False, enable_segmentation=True, enable_inst_interactivity=True, "
                 "device='cpu', compile=False) recorded as a _target_ tree, float32, CPU")
    set_str_attr(g, "note_defaults_added", json.dumps(added))
    set_str_attr(g, "note_overrides", json.dumps({"image": args.overrides + args.new_overrides,
                                                  "tracker": args.tracker_set + args.tracker_set_new}))
    set_str_attr(g, "note_weights", f"random, seed {args.seed}; keys in the released sam3.pt "
                 "layout (detector.*, tracker.*)")
    set_str_attr(g, "note_nudges", json.dumps(args.nudge))
    set_str_attr(g, "note_shims", json.dumps(sam3_shims.INSTALLED + sam3_video_shims.SHIMS))
    gw = w.group(w.f, "weights")
    for key, t in built.model.state_dict().items():
        w.dataset(gw, released_key(key), to_array(t, BOOL))
    gn = w.group(w.f, "notes")
    set_str_attr(gn, "predictor_feature_sizes", json.dumps(results[0]["bb_feat_sizes"]))
    set_str_attr(gn, "device_moves", json.dumps([s for s in sam3_shims.INSTALLED if "cuda" in s]))
    set_str_attr(gn, "dtype_upcasts", "{}")
    set_str_attr(gn, "api_stand_ins", json.dumps(sam3_video_shims.SHIMS))

    gi = w.group(w.f, "inputs")
    set_str_attr(gi, "task", "sam3_inst")
    w.dataset(gi, "image_u8", image)
    gp = w.group(gi, "prompts")
    go = w.group(w.f, "outputs")
    for k, (p, r) in enumerate(zip(prompts, results)):
        gk = w.group(gp, str(k))
        w.dataset(gk, "point_coords", np.array(p["points"], np.float32).reshape(-1, 2))
        w.dataset(gk, "point_labels", np.array(p["labels"], np.int32).reshape(-1))
        if p["box"] is not None:
            w.dataset(gk, "box", np.array(p["box"], np.float32))
        if r["mask_input"] is not None:
            w.dataset(gk, "mask_input", r["mask_input"].astype(np.float32))
        set_attr(gk, "multimask_output", bool(p["multimask"]))
        set_str_attr(gk, "note_prompt", p["spec"])
        gk = w.group(go, str(k))
        for name in ("masks", "iou_predictions", "low_res_masks"):
            w.dataset(gk, name, r[name].astype(np.float32))
    w.trace(tracer.records)
    w.close()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam3_build.add_model_args(p)
    p.add_argument("--tracker-set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--tracker-set-new", action="append", default=[], metavar="KEY=VALUE")
    g = p.add_argument_group("run")
    g.add_argument("--image", help="RGB image file")
    g.add_argument("--image-size", default="60x90", help="HxW of the synthetic image")
    g.add_argument("--image-seed", type=int)
    g.add_argument("--prompt", action="append", default=[], help="one predict_inst call")
    g.add_argument("--variant")
    g.add_argument("--full", action="store_true")
    g.add_argument("--compress", action="store_true")
    g.add_argument("--out", required=True)
    args = p.parse_args(argv)
    prompts = []
    for text in args.prompt:
        pr = parse_prompt(text)
        pr["spec"] = text
        prompts.append(pr)
    if not prompts:
        raise SystemExit("give at least one --prompt")

    built, added = build_inst_model(args)
    model = built.model
    inst = model.inst_interactive_predictor
    r = built.tree["backbone"]["visual"]["trunk"]["img_size"]
    if inst.model.image_size != r:
        raise SystemExit(f"tracker image_size {inst.model.image_size} != trunk img_size {r}")
    g4 = inst.model.low_res_mask_size
    # SAM3InteractiveImagePredictor hard-codes the feature sizes of 1008
    # (288, 144, 72); set them for the model's size (equal at 1008).
    inst._bb_feat_sizes = [(g4, g4), (g4 // 2, g4 // 2), (g4 // 4, g4 // 4)]
    from sam3.model.sam3_image_processor import Sam3Processor
    processor = Sam3Processor(model, resolution=r, device="cpu")
    tracer, margins, counters = ScopeTracer(), Margins(), Counters()
    install_tracing(model, processor, tracer, margins, counters, args.full)

    from PIL import Image
    image = load_image(args)
    results, previous = [], None
    with torch.inference_mode():
        state = processor.set_image(Image.fromarray(image))
        for k, pr in enumerate(prompts):
            mask = mask_for_prompt(pr, k, previous, g4, args.seed)
            has_pts = bool(pr["points"])
            masks, iou, low = model.predict_inst(
                state,
                point_coords=np.array(pr["points"], np.float32) if has_pts else None,
                point_labels=np.array(pr["labels"], np.int32) if has_pts else None,
                box=np.array(pr["box"], np.float32) if pr["box"] is not None else None,
                mask_input=mask, multimask_output=pr["multimask"], return_logits=True)
            previous = {"masks": masks, "iou_predictions": iou, "low_res_masks": low,
                        "mask_input": mask, "prompt": pr, "bb_feat_sizes": inst._bb_feat_sizes}
            results.append(previous)
            print(f"prompt {k}: ious {np.round(iou, 4).tolist()} mask>0 "
                  f"{[round(float((m > 0).mean()), 3) for m in masks]}")
    count_fill(results, counters)
    print(counters.report())
    print(margins.report())
    write(args, built, added, image, prompts, results, tracer, margins, counters)
    print(f"wrote {args.out}: {len(tracer.records)} trace records, {os.path.getsize(args.out)} bytes")


if __name__ == "__main__":
    main()
