#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the official SAM 3 video predictor (Sam3VideoPredictor over
build_sam3_video_model's Sam3VideoInferenceWithInstanceInteractivity) on a
folder of JPEG frames and a list of requests, and write a parity dump of
task sam3_video (docs/parity.md, "SAM 3 video"; tools/README.md says every
option, shim and record).

Example (tiny random model; tools/make_fixtures.sh has the real commands):
  /usr/bin/python3 tools/dump_sam3_video.py --sam3-src /work/ext/sam3 \\
      --sam3-commit 99d02f28c8d34610ab35559b72642b01f10fdb1e --ftfy-src /work/ext/ftfy \\
      --set backbone.visual.trunk.img_size=112 ... --tracker-set image_size=112 ... \\
      --video-set image_size=112 --video-set hotstart_delay=3 --seed 1 \\
      --clip-size 64x80 --clip-frames 6 \\
      --request "add_prompt;frame=0;text=a red car" --request "propagate;direction=both" \\
      --variant tiny --out tiny_video.h5 --compress

Model: build_sam3_video_model's _target_ tree (sam3_build.video_tree) with
  --set / --set-new               under detector. (image-tree paths, as dump_sam3.py)
  --tracker-set / --tracker-set-new   under tracker.
  --video-set / --video-set-new   at the root (the loop's thresholds, image_size, ...)
then the constructor defaults of the loop and the tracker filled in, seeded
weights (--seed, every state_dict entry of the video model), --nudge.

Requests (one --request per predictor call, in order; fields after the type
separated by ';'):
  add_prompt;frame=N[;text=WORDS|textjson="..."][;box=x,y,w,h,label]...
             [;obj=ID|first|last;points=x,y,l|x,y,l]
      Sam3VideoPredictor.add_prompt: boxes in normalised xywh (as the
      predictor takes them), points normalised, labels 1 / 0; obj=first
      (last) is the smallest (largest) object id of the frame's latest
      output, resolved when the request runs (/inputs holds the id);
      frame=shown is the smallest frame index whose latest output shows an
      object (for a click on a detected object)
  propagate[;direction=both|forward|backward][;start=N][;max=N]
      Sam3VideoPredictor.propagate_in_video (default direction both)
  remove;obj=ID        remove_object (is_user_action=True)
  reset                reset_session
"""

import argparse
import copy
import json
import os
import resource
import shlex
import sys
import time

import numpy as np
import torch

import sam3_build
import sam3_shims
import sam3_video_config as vcfg
import sam3_video_shims
from dump_sam2_video import parse_occlusion, synth_clip, write_clip
from dump_sam3 import _fields
from parity_trace import CompactLinkingWriter, set_attr, set_str_attr, to_array
from sam3_video_margins import Counters, Margins
from sam3_video_record import LoopRecorder
from sam3_video_trace import BOOL, ScopeTracer, TracedTokenizer, wrap_points
from synth_image import parse_hw

BUILDER_NOTE = ("build_sam3_video_model(checkpoint_path=None, load_from_HF=False, "
                "apply_temporal_disambiguation=True, device='cpu', compile=False) recorded as a "
                "_target_ tree, eval, float32, CPU, no autocast")


# --------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------

def _floats(text, n):
    vals = [float(v) for v in text.split(",")]
    if len(vals) != n:
        raise SystemExit(f"expected {n} numbers: {text!r}")
    return vals


def parse_request(text):
    kind, _, rest = text.partition(";")
    kind = kind.strip()
    r = {"type": kind, "spec": text}
    fields = list(_fields(rest))
    if kind == "add_prompt":
        r.update(frame=None, text=None, boxes=[], box_labels=[], points=[], point_labels=[],
                 obj=None)
        for k, v in fields:
            if k == "frame":
                r["frame"] = v if v == "shown" else int(v)
            elif k in ("text", "textjson"):
                r["text"] = v
            elif k == "box":
                x, y, w, h, lab = _floats(v, 5)
                r["boxes"].append([x, y, w, h])
                r["box_labels"].append(int(lab))
            elif k == "points":
                for item in v.split("|"):
                    x, y, lab = _floats(item, 3)
                    r["points"].append([x, y])
                    r["point_labels"].append(int(lab))
            elif k == "obj":
                r["obj"] = v if v in ("first", "last") else int(v)
            else:
                raise SystemExit(f"add_prompt: unknown field {k!r}")
        if r["frame"] is None:
            raise SystemExit(f"{text!r}: add_prompt needs frame=N")
        if r["points"] and r["obj"] is None:
            raise SystemExit(f"{text!r}: points need obj=ID")
    elif kind == "propagate":
        r.update(direction="both", start=None, max=None)
        for k, v in fields:
            if k == "direction":
                r["direction"] = v
            elif k in ("start", "max"):
                r[k] = int(v)
            else:
                raise SystemExit(f"propagate: unknown field {k!r}")
    elif kind == "remove":
        r["obj"] = None
        for k, v in fields:
            if k != "obj":
                raise SystemExit(f"remove: unknown field {k!r}")
            r["obj"] = int(v)
        if r["obj"] is None:
            raise SystemExit(f"{text!r}: remove needs obj=ID")
    elif kind == "reset":
        if fields:
            raise SystemExit("reset takes no fields")
    else:
        raise SystemExit(f"unknown request type {kind!r} (add_prompt, propagate, remove, reset)")
    return r


def official_request(r, session_id):
    """The dict Sam3VideoPredictor.handle_request / handle_stream_request takes."""
    if r["type"] == "add_prompt":
        return {"type": "add_prompt", "session_id": session_id, "frame_index": r["frame"],
                "text": r["text"],
                "points": r["points"] or None, "point_labels": r["point_labels"] or None,
                "bounding_boxes": r["boxes"] or None,
                "bounding_box_labels": r["box_labels"] or None, "obj_id": r["obj"]}
    if r["type"] == "propagate":
        return {"type": "propagate_in_video", "session_id": session_id,
                "propagation_direction": r["direction"], "start_frame_index": r["start"],
                "max_frame_num_to_track": r["max"]}
    if r["type"] == "remove":
        return {"type": "remove_object", "session_id": session_id, "obj_id": r["obj"],
                "is_user_action": True}
    return {"type": "reset_session", "session_id": session_id}


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------

def add_video_model_args(p):
    sam3_build.add_model_args(p)
    g = p.add_argument_group("video model")
    g.add_argument("--tracker-set", action="append", default=[], metavar="KEY=VALUE",
                   help="as --set, under the tree's tracker node")
    g.add_argument("--tracker-set-new", action="append", default=[], metavar="KEY=VALUE")
    g.add_argument("--video-set", action="append", default=[], metavar="KEY=VALUE",
                   help="as --set, at the root (Sam3VideoInferenceWithInstanceInteractivity "
                   "arguments: thresholds, image_size, ...)")
    g.add_argument("--video-set-new", action="append", default=[], metavar="KEY=VALUE",
                   help="a root argument the builder does not pass (max_num_objects, ...)")


def build_video_model(args):
    sam3_build.fp32_cpu_settings(args.threads)
    root, pkg, mb = sam3_build.import_sam3(args.sam3_src, args.ftfy_src)
    source = "facebookresearch/sam3@" + sam3_build.source_commit(root, args.sam3_commit)
    bpe = os.path.abspath(args.bpe or os.path.join(root, sam3_build.BPE_REL))
    tree = sam3_build.video_tree(mb, bpe)
    for prefix, sets, news in (("detector.", args.overrides, args.new_overrides),
                               ("tracker.", args.tracker_set, args.tracker_set_new),
                               ("", args.video_set, args.video_set_new)):
        for o in sets:
            sam3_build.apply_override(tree, prefix + o)
        for o in news:
            sam3_build.apply_override(tree, prefix + o, allow_new=True)
    added = vcfg.fill_video_defaults(tree)
    sam3_video_shims.install()
    model = sam3_build.instantiate(copy.deepcopy(tree), bpe)
    sam3_build.randomize_weights(model, args.seed)
    sam3_build.apply_nudges(model, args.nudge)
    model = model.float().eval()
    return sam3_build.Built(model, tree, source, bpe), added


def check_sizes(tree):
    """The loop's image_size, the tracker's and the detector's must agree
    (the official builder passes 1008 to all three)."""
    r = tree["image_size"]
    det = tree["detector"]["backbone"]["visual"]["trunk"]["img_size"]
    trk = tree["tracker"]["image_size"]
    if not r == det == trk:
        raise SystemExit(f"image_size {r} (loop), {det} (detector trunk img_size) and {trk} "
                         "(tracker) must be equal: set all three")


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def write_model(w, built, args, added, upcast_sites, recorder):
    g = w.group(w.f, "model")
    set_str_attr(g, "family", "sam3")
    set_str_attr(g, "variant", args.variant or "sam3-video-random")
    set_str_attr(g, "config_json", built.config_json)
    set_str_attr(g, "source", built.source)
    set_str_attr(g, "torch_version", torch.__version__)
    g.attrs.create("seed", np.int64(args.seed))
    g.attrs.create("resolution", np.int64(built.tree["image_size"]))
    set_str_attr(g, "code_constants_json", json.dumps(vcfg.code_constants()))
    w.dataset(g, "bpe_vocab_gz", np.frombuffer(sam3_build.read_bpe_bytes(built.bpe_path),
                                               dtype=np.uint8))
    set_str_attr(g, "note_builder", BUILDER_NOTE)
    set_str_attr(g, "note_defaults_added", json.dumps(added))
    set_str_attr(g, "note_overrides", json.dumps(
        {"detector": args.overrides + args.new_overrides,
         "tracker": args.tracker_set + args.tracker_set_new,
         "root": args.video_set + args.video_set_new}))
    set_str_attr(g, "note_weights", f"random, seed {args.seed} over the video model's "
                 "state_dict (tools/README.md, SAM 3 weights)")
    set_str_attr(g, "note_nudges", json.dumps(args.nudge))
    set_str_attr(g, "note_shims", json.dumps(sam3_shims.INSTALLED + sam3_video_shims.SHIMS))
    set_str_attr(g, "note_ftfy_version", sam3_build.ftfy_version())
    gw = w.group(w.f, "weights")
    for key, t in built.model.state_dict().items():
        w.dataset(gw, key, to_array(t, BOOL))


def write_notes(w, upcast_sites, recorder):
    """/notes: what the dump tool changed to run the official code on the
    CPU (the format's requirement), as JSON attributes."""
    g = w.group(w.f, "notes")
    by = {}
    for site, frame, objs in recorder.upcasts:
        by.setdefault(site, []).append({"frame_idx": frame, "obj_ids": objs})
    set_str_attr(g, "device_moves", json.dumps(
        [s for s in sam3_video_shims.SHIMS if s.startswith("device:")]
        + [s for s in sam3_shims.INSTALLED if "cuda" in s]))
    set_str_attr(g, "dtype_upcasts", json.dumps(
        {site: {"reason": upcast_sites[site], "calls": by.get(site, [])} for site in upcast_sites}))
    set_str_attr(g, "api_stand_ins", json.dumps(
        [s for s in sam3_video_shims.SHIMS if s.startswith("api:")]))
    set_str_attr(g, "cpu_fixes", json.dumps(
        [s for s in sam3_video_shims.SHIMS if s.startswith("cpu:")]))
    set_str_attr(g, "autocast", "the official code enters torch.autocast('cuda', bfloat16) "
                 "process-wide (Sam3TrackerPredictor.__init__); without CUDA it is disabled, "
                 "so every layer ran in float32 and only the explicit .to(torch.bfloat16) / "
                 "float16 roundings of the official code took effect")


def write_inputs(w, frames_u8, frame_files, requests):
    g = w.group(w.f, "inputs")
    set_str_attr(g, "task", "sam3_video")
    w.dataset(g, "frames_u8", np.stack(frames_u8))
    set_str_attr(g, "note_frame_files", json.dumps([os.path.basename(f) for f in frame_files]))
    gr = w.group(g, "requests")
    for k, r in enumerate(requests):
        gk = w.group(gr, str(k))
        set_str_attr(gk, "type", r["type"])
        set_str_attr(gk, "note_request", r["spec"])
        if r["type"] == "add_prompt":
            gk.attrs.create("frame_index", np.int64(r["frame"]))
            if r["text"] is not None:
                set_str_attr(gk, "text", r["text"])
            if r["obj"] is not None:
                gk.attrs.create("obj_id", np.int64(r["obj"]))
            w.dataset(gk, "bounding_boxes", np.array(r["boxes"], np.float32).reshape(-1, 4))
            w.dataset(gk, "bounding_box_labels", np.array(r["box_labels"], np.int32).reshape(-1))
            w.dataset(gk, "points", np.array(r["points"], np.float32).reshape(-1, 2))
            w.dataset(gk, "point_labels", np.array(r["point_labels"], np.int32).reshape(-1))
        elif r["type"] == "propagate":
            set_str_attr(gk, "propagation_direction", r["direction"])
            for key, name in (("start", "start_frame_index"), ("max", "max_frame_num_to_track")):
                if r[key] is not None:
                    gk.attrs.create(name, np.int64(r[key]))
        elif r["type"] == "remove":
            gk.attrs.create("obj_id", np.int64(r["obj"]))


def write_frame_outputs(w, g, outputs):
    w.dataset(g, "out_obj_ids", np.asarray(outputs["out_obj_ids"], np.int64))
    w.dataset(g, "out_probs", np.asarray(outputs["out_probs"], np.float32))
    w.dataset(g, "out_boxes_xywh", np.asarray(outputs["out_boxes_xywh"], np.float32).reshape(-1, 4))
    w.dataset(g, "out_binary_masks", np.asarray(outputs["out_binary_masks"]).astype(BOOL))
    stats = outputs.get("frame_stats")
    if stats:
        for k, v in stats.items():
            set_attr(g, "note_" + k, int(v))


def write_outputs(w, requests, results):
    g = w.group(w.f, "outputs")
    gr = w.group(g, "requests")
    for k, (r, res) in enumerate(zip(requests, results)):
        gk = w.group(gr, str(k))
        set_str_attr(gk, "type", r["type"])
        if r["type"] == "add_prompt":
            gk.attrs.create("frame_index", np.int64(res["frame_index"]))
            write_frame_outputs(w, gk, res["outputs"])
        elif r["type"] == "propagate":
            gy = w.group(gk, "yields")
            for i, y in enumerate(res):
                gi = w.group(gy, str(i))
                gi.attrs.create("frame_index", np.int64(y["frame_index"]))
                write_frame_outputs(w, gi, y["outputs"])
        else:
            set_attr(gk, "is_success", bool(res["is_success"]))


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------

def make_predictor(model):
    """A Sam3VideoPredictor around the built model (its __init__ builds the
    model itself from a checkpoint and moves it to CUDA)."""
    from sam3.model.sam3_video_predictor import Sam3VideoPredictor
    pred = Sam3VideoPredictor.__new__(Sam3VideoPredictor)
    pred.async_loading_frames = False
    pred.video_loader_type = "cv2"
    pred.model = model
    return pred


def run_requests(pred, recorder, folder, requests, counters):
    sid = pred.start_session(folder)["session_id"]
    results, shown = [], {}     # shown: frame -> object ids of its latest output
    for r in requests:
        if r.get("frame") == "shown":
            r["frame"] = min((t for t, ids in shown.items() if ids), default=None)
            if r["frame"] is None:
                raise SystemExit(f"{r['spec']!r}: no frame shows an object yet")
            print(f"{r['spec']!r}: frame = {r['frame']}")
        if r.get("obj") in ("first", "last"):
            ids = sorted(shown.get(r["frame"], []))
            if not ids:
                raise SystemExit(f"{r['spec']!r}: no object shown on frame {r['frame']} yet")
            r["obj"] = ids[0] if r["obj"] == "first" else ids[-1]
            print(f"{r['spec']!r}: obj = {r['obj']}")
        req = official_request(r, sid)
        if r["type"] == "propagate":
            ys = []
            for y in pred.handle_stream_request(req):
                recorder.frame_of_post(y["frame_index"])
                shown[y["frame_index"]] = [int(i) for i in y["outputs"]["out_obj_ids"]]
                ys.append(y)
            results.append(ys)
        else:
            res = pred.handle_request(req)
            if r["type"] == "add_prompt":
                recorder.frame_of_post(res["frame_index"])
                shown[res["frame_index"]] = [int(i) for i in res["outputs"]["out_obj_ids"]]
            results.append(res)
    count_output_paths(requests, results, counters)
    return results


def count_output_paths(requests, results, counters):
    """Paths visible in the outputs: objects that vanish and come back
    within one propagation, frames yielded after later frames were
    processed (hot-start buffering), backward frames."""
    for r, res in zip(requests, results):
        if r["type"] != "propagate":
            continue
        seen = {}
        for y in res:
            ids = set(int(i) for i in y["outputs"]["out_obj_ids"])
            for oid in set(seen) | ids:
                seen.setdefault(oid, []).append(oid in ids)
        for oid, pres in seen.items():
            s = "".join("1" if p else "0" for p in pres).strip("0")
            if "0" in s:
                counters.add("outputs: object vanishes and comes back", example=f"obj {oid}: {s}")
        frames = [y["frame_index"] for y in res]
        back = sum(1 for a, b in zip(frames, frames[1:]) if b < a)
        counters.add("outputs: backward steps in yield order", back)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_video_model_args(p)
    g = p.add_argument_group("video")
    g.add_argument("--frames", help="folder of JPEG frames <int>.jpg (official loader)")
    g.add_argument("--clip-size", default="64x80", help="HxW of the synthetic clip")
    g.add_argument("--clip-frames", type=int, default=6)
    g.add_argument("--clip-seed", type=int, help="seed of the synthetic clip (default --seed)")
    g.add_argument("--jpeg-quality", type=int, default=90)
    g.add_argument("--clip-occlude", action="append", default=[], metavar="F[,F]:x0,y0,x1,y1")
    g.add_argument("--request", action="append", default=[], help="one predictor call (above)")
    g.add_argument("--variant", help="free text for /model variant")
    g.add_argument("--full", action="store_true", help="record every module")
    g.add_argument("--no-trace", action="store_true",
                   help="run and print margins and counters only (no file; for searching seeds)")
    g.add_argument("--compress", action="store_true", help="gzip integer datasets >= 4 KiB, float ones >= 64 KiB")
    g.add_argument("--margins-json", help="also write every margin entry here")
    g.add_argument("--out", help="output .h5")
    args = p.parse_args(argv)
    if not args.out and not args.no_trace:
        raise SystemExit("give --out FILE.h5 (or --no-trace)")
    requests = [parse_request(t) for t in args.request]
    if not requests:
        raise SystemExit("give at least one --request")

    t0 = time.time()
    built, added = build_video_model(args)
    check_sizes(built.tree)
    model = built.model
    tracer, margins, counters = ScopeTracer(), Margins(), Counters()
    upcast_sites = sam3_video_shims.install_bf16_upcasts(model, lambda s, r: recorder.on_upcast(s, r))
    if not args.no_trace:
        wrap_points(tracer, model, args.full)
        lb = model.detector.backbone.language_backbone
        lb.tokenizer = TracedTokenizer(lb.tokenizer, tracer)
    recorder = LoopRecorder(model, tracer, margins, counters)
    recorder.install()
    pred = make_predictor(model)
    t_build = time.time() - t0

    folder = args.frames
    if folder is None:
        base = os.path.splitext(args.out)[0] if args.out else "/tmp/sam3_video_search"
        folder = base + "_frames"
        h, w = parse_hw(args.clip_size)
        seed = args.seed if args.clip_seed is None else args.clip_seed
        occ = [parse_occlusion(t) for t in args.clip_occlude]
        write_clip(synth_clip(h, w, args.clip_frames, seed, occ), folder, args.jpeg_quality)

    t1 = time.time()
    with torch.inference_mode():
        results = run_requests(pred, recorder, folder, requests, counters)
    t_run = time.time() - t1
    print_results(requests, results)
    print("detections (highest probability, kept): " + ", ".join(
        f"frame {t}: {hi:.4f}, {n}" for t, hi, n in recorder.score_ranges))
    print(counters.report())
    print(margins.report())
    if args.margins_json:
        with open(args.margins_json, "w") as f:
            json.dump({"summary": margins.summary(), "entries": margins.entries,
                       "bf16": margins.bf16, "counters": counters.as_dict()}, f, indent=1)
    if args.no_trace:
        return

    w = CompactLinkingWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    set_str_attr(w.f, "note_margins", json.dumps(margins.summary()))
    set_str_attr(w.f, "note_counters", json.dumps(counters.as_dict()))
    write_model(w, built, args, added, upcast_sites, recorder)
    write_notes(w, upcast_sites, recorder)
    write_inputs(w, recorder.frames_u8, recorder.frame_files, requests)
    write_outputs(w, requests, results)
    w.trace(tracer.records)
    w.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"wrote {args.out}: {len(tracer.records)} trace records ({w.links} hard links), "
          f"{os.path.getsize(args.out)} bytes; build {t_build:.1f} s, requests {t_run:.1f} s, "
          f"peak RSS {peak:.0f} MB")


def print_results(requests, results):
    for k, (r, res) in enumerate(zip(requests, results)):
        if r["type"] == "propagate":
            for y in res:
                o = y["outputs"]
                print(f"request {k} propagate: frame {y['frame_index']}: objs "
                      f"{list(map(int, o['out_obj_ids']))} probs {np.round(o['out_probs'], 3).tolist()} "
                      f"area {[int(m.sum()) for m in o['out_binary_masks']]}")
        elif r["type"] == "add_prompt":
            o = res["outputs"]
            print(f"request {k} add_prompt frame {res['frame_index']}: objs "
                  f"{list(map(int, o['out_obj_ids']))} probs {np.round(o['out_probs'], 3).tolist()}")
        else:
            print(f"request {k} {r['type']}: {res}")


if __name__ == "__main__":
    main()
