#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Run the official SAM 2 video predictor on a folder of JPEG frames, a list
of prompts and one propagation, and write a parity dump
(the parity dump format read by parity/dump.c, video task).

Example (tiny random model; the fixtures' commands are in make_fixtures.sh):
  SAM2_SRC=/work/sam2src /usr/bin/python3 tools/dump_sam2_video.py \\
      --sam2-commit 2b90b9f5ceec907a1c18123530e92e794ad901a4 \\
      --config sam2.1_hiera_t --set model.image_size=128 ... --seed 1 \\
      --clip-size 96x144 --clip-frames 5 \\
      --prompt "frame=0 obj=1 points=40,50,1" \\
      --prompt "frame=2 obj=2 box=60,20,120,70" \\
      --variant tiny --out tiny_video.h5 --compress

Frames: --frames DIR (the official JPEG-folder loader: files <int>.jpg), or a
seeded synthetic clip of moving shapes written as JPEGs to <out stem>_frames/
(--clip-size HxW, --clip-frames N, --clip-seed S, --jpeg-quality Q,
--clip-occlude F[,F]:x0,y0,x1,y1 for a grey occluder on frames F).

Prompt syntax (one --prompt per call, applied in order before propagation):
  space-separated fields:
    frame=N                      frame index (default 0)
    obj=ID                       client object id (default 1)
    points=x,y,l;x,y,l           clicks in video pixels (floats ok), l 1/0
    box=x0,y0,x1,y1              box in video pixels (needs clear=1)
    clear=1|0                    clear_old_points (default 1); 0 appends the
                                 clicks to the frame's earlier ones
    mask=SPEC                    add_new_mask instead (no points/box):
                                 FILE (PNG etc., nonzero = object; any size),
                                 rect:x0,y0,x1,y1 | ellipse:cx,cy,rx,ry (at
                                 video resolution, pixel centres inside),
                                 empty (all false: object absent)
  points/box -> add_new_points_or_box(frame, obj, points, labels,
  clear_old_points, box=box); mask -> add_new_mask(frame, obj, mask).
Propagation: propagate_in_video(start_frame_idx=--start, max_frame_num_to_track
=--max-frames, reverse=--reverse).

The predictor's options are written to /model config_json only (every
constructor option, defaults filled in); fill_hole_area there is what the run
applied: 0 unless --fill-holes-shim installs the CPU stand-in for sam2._C.
Where an object's memory bank has no object pointer the bf16 memory is upcast
exactly (sam2 issue 308) and the records get samc_note.  The decision margins
are printed at the end (tools/README.md).
"""

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import sys
import warnings

import h5py
import numpy as np
import torch

import sam2_build
import sam2_shims
from dump_sam2 import parity_point_names, write_model
from parity_trace import Tracer, Writer, set_attr, set_str_attr, to_array
from synth_image import parse_hw

# Harness tolerances (docs/parity.md): a decision whose margin is below one
# of them can flip in a C run that passes every comparison.
TOL_REF, TOL_FAST = 1e-5, 1e-4

# Trace-record attribute marking the calls where the dump tool upcast a
# bfloat16 memory to float32 (see Run._wrap_memory_attention).
UPCAST_NOTE = ("bf16_memory_upcast: the memory bank gave no object pointer, so torch.cat "
               "left the memory bfloat16 and the official fp32 code fails in the "
               "cross-attention's v_proj (sam2 issue 308); the dump tool passed "
               "memory.float() (exact), the promotion torch.cat applies whenever a "
               "pointer is present")


# --------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------

def _floats(text, n=None):
    vals = [float(v) for v in text.split(",")]
    if n is not None and len(vals) != n:
        raise SystemExit(f"expected {n} numbers: {text!r}")
    return vals


def parse_prompt(text):
    p = {"frame": 0, "obj": 1, "points": [], "labels": [], "box": None,
         "clear": True, "mask": None, "text": text}
    for field in text.split():
        key, eq, val = field.partition("=")
        if not eq:
            raise SystemExit(f"prompt field {field!r}: expected key=value")
        if key == "frame":
            p["frame"] = int(val)
        elif key == "obj":
            p["obj"] = int(val)
        elif key == "points":
            for item in val.split(";"):
                x, y, label = _floats(item, 3)
                p["points"].append((x, y))
                p["labels"].append(int(label))
        elif key == "box":
            p["box"] = _floats(val, 4)
        elif key == "clear":
            p["clear"] = val.lower() in ("1", "true", "yes")
        elif key == "mask":
            p["mask"] = val
        else:
            raise SystemExit(f"unknown prompt field {key!r}")
    if p["mask"] is not None and (p["points"] or p["box"] is not None):
        raise SystemExit(f"prompt {text!r}: mask cannot be combined with points/box")
    if p["mask"] is None and not p["points"] and p["box"] is None:
        raise SystemExit(f"prompt {text!r}: give points, box or mask")
    return p


def make_mask(spec, h, w):
    """The bool mask of a mask=SPEC prompt (at video resolution unless a file)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64) + 0.5
    if spec == "empty":
        return np.zeros((h, w), bool)
    if spec.startswith("rect:"):
        x0, y0, x1, y1 = _floats(spec[5:], 4)
        return (xx >= x0) & (xx < x1) & (yy >= y0) & (yy < y1)
    if spec.startswith("ellipse:"):
        cx, cy, rx, ry = _floats(spec[8:], 4)
        return ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
    from PIL import Image
    return np.array(Image.open(spec).convert("L")) > 0


# --------------------------------------------------------------------------
# Synthetic clip
# --------------------------------------------------------------------------

def parse_occlusion(text):
    """'F[,F...]:x0,y0,x1,y1' -> (set of frames, box)."""
    frames, _, box = text.partition(":")
    try:
        return {int(t) for t in frames.split(",")}, _floats(box, 4)
    except ValueError:
        raise SystemExit(f"--clip-occlude {text!r}: expected F[,F...]:x0,y0,x1,y1")


def synth_clip(h, w, n, seed, occlusions=()):
    """n frames [h,w,3] uint8: a smooth colour gradient with mild noise and
    four soft-edged shapes moving linearly; the last one leaves the frame.
    occlusions: (frames, (x0,y0,x1,y1)) pairs: on those frames a flat grey
    soft-edged rectangle is drawn over everything (before the noise)."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    corners = rng.uniform(30, 200, (4, 3))
    u, v = xx / max(w - 1, 1), yy / max(h - 1, 1)
    bg = ((1 - u) * (1 - v))[..., None] * corners[0] + (u * (1 - v))[..., None] * corners[1] \
        + ((1 - u) * v)[..., None] * corners[2] + (u * v)[..., None] * corners[3]
    shapes = []
    for i in range(4):
        shapes.append({
            "kind": ("ellipse", "rect")[i % 2],
            "color": rng.uniform(0, 255, 3),
            "c": np.array([rng.uniform(0.25, 0.75) * h, rng.uniform(0.2, 0.6) * w]),
            "r": np.array([rng.uniform(0.1, 0.2) * h, rng.uniform(0.08, 0.18) * w]),
            "vel": np.array([rng.uniform(-0.04, 0.04) * h, rng.uniform(-0.03, 0.06) * w]),
        })
    # the last shape exits through the right edge by the last frame
    last = shapes[-1]
    last["c"] = np.array([0.5 * h, 0.6 * w])
    last["vel"] = np.array([0.0, (0.55 * w + last["r"][1]) / max(n - 1, 1)])
    frames = []
    for t in range(n):
        img = bg.copy()
        for s in shapes:
            cy, cx = s["c"] + t * s["vel"]
            ry, rx = s["r"]
            if s["kind"] == "ellipse":
                d = np.sqrt(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2)
                alpha = np.clip((1.0 - d) * min(ry, rx) / 1.5, 0, 1)
            else:
                d = np.maximum(np.abs(yy - cy) - ry, np.abs(xx - cx) - rx)
                alpha = np.clip(-d / 1.5, 0, 1)
            img = img * (1 - alpha[..., None]) + alpha[..., None] * s["color"]
        for frames_o, (x0, y0, x1, y1) in occlusions:
            if t in frames_o:
                d = np.maximum(np.maximum(x0 - xx, xx - x1), np.maximum(y0 - yy, yy - y1))
                alpha = np.clip(-d / 1.5, 0, 1)
                img = img * (1 - alpha[..., None]) + alpha[..., None] * 128.0
        img += rng.normal(0, 2.0, img.shape)
        frames.append(np.clip(np.round(img), 0, 255).astype(np.uint8))
    return frames


def write_clip(frames, folder, quality):
    from PIL import Image
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.lower().endswith((".jpg", ".jpeg")):
            os.remove(os.path.join(folder, name))
    for t, f in enumerate(frames):
        Image.fromarray(f).save(os.path.join(folder, f"{t:05d}.jpg"), quality=quality)


# --------------------------------------------------------------------------
# Tracing
# --------------------------------------------------------------------------

class VideoTracer(Tracer):
    """Tracer whose records carry frame_idx / obj_id attrs from a context
    stack (set by the wrappers of the predictor's per-frame functions)."""

    def __init__(self):
        super().__init__()
        self._ctx = [{}]

    @contextlib.contextmanager
    def context(self, **kw):
        self._ctx.append({**self._ctx[-1], **kw})
        try:
            yield
        finally:
            self._ctx.pop()

    def _begin(self, name, cls, args, kwargs):
        rec = super()._begin(name, cls, args, kwargs)
        rec.attrs = {k: v for k, v in self._ctx[-1].items() if v is not None}
        return rec

    def current(self, key):
        return self._ctx[-1].get(key)

    def record(self, name, cls, args, result):
        """Record a call that was not intercepted (already computed)."""
        rec = self._begin(name, cls, args, {})
        self._end(rec, result)
        return rec


def video_parity_point_names(model):
    names = parity_point_names(model)
    names += ["memory_encoder.mask_downsampler"]
    names += [f"memory_encoder.fuser.layers.{i}" for i in range(len(model.memory_encoder.fuser.layers))]
    names += ["memory_encoder"]
    names += [f"memory_attention.layers.{i}" for i in range(len(model.memory_attention.layers))]
    names += ["memory_attention", "obj_ptr_proj"]
    return names


def obj_id_of_output_dict(state, output_dict):
    for idx, d in state["output_dict_per_obj"].items():
        if d is output_dict:
            return state["obj_idx_to_id"][idx]
    raise RuntimeError("output_dict of no object")


def obj_id_of_score(state, frame_idx, score):
    """_run_memory_encoder (preflight) gets no object index; find the
    temporary output whose object_score_logits it was given."""
    for idx, temp in state["temp_output_dict_per_obj"].items():
        for key in ("cond_frame_outputs", "non_cond_frame_outputs"):
            out = temp[key].get(frame_idx)
            if out is not None and out["object_score_logits"] is score:
                return state["obj_idx_to_id"][idx]
    raise RuntimeError(f"memory encoder call on frame {frame_idx} of no object")


# --------------------------------------------------------------------------
# Decision margins
# --------------------------------------------------------------------------

def bf16_midpoint_distance(x):
    """|x - m| for each float32 x, m the midpoint between the two bfloat16
    values around x (where round-to-nearest-even changes its result; exactly
    representable in float32: the upper 16 bits of x with bit 15 set)."""
    a = np.ascontiguousarray(x, np.float32)
    bits = a.view(np.uint32)
    mid = ((bits & np.uint32(0xFFFF0000)) | np.uint32(0x8000)).view(np.float32)
    return np.abs(a.astype(np.float64) - mid.astype(np.float64))


def stability_flip_shift(logits, delta, thresh):
    """Smallest shift of token-0 logits, relative to max|logit|, that changes
    `stability >= thresh` (stability = #(l > delta) / #(l > -delta)): pixels
    are moved across +-delta one at a time, nearest first, in the direction
    that moves the score towards the threshold, until the decision flips.
    1.0 if no such shift exists."""
    l = logits.flatten().double().numpy()
    scale = max(float(np.abs(l).max()), 1e-30)
    i, u = int((l > delta).sum()), int((l > -delta).sum())
    stable = (i / u if u else 1.0) >= thresh
    if stable:   # lose intersection pixels, gain union pixels
        moves = [(x - delta, "i-") for x in l[l > delta]] + \
                [(-delta - x, "u+") for x in l[l <= -delta]]
    else:        # gain intersection pixels, lose union pixels
        moves = [(delta - x, "i+") for x in l[l <= delta]] + \
                [(x + delta, "u-") for x in l[l > -delta]]
    for dist, kind in sorted(moves):
        i += {"i-": -1, "i+": 1}.get(kind, 0)
        u += {"u+": 1, "u-": -1}.get(kind, 0)
        if ((i / u if u else 1.0) >= thresh) != stable:
            return max(dist, 0.0) / scale
    return 1.0


class Margins:
    """Distance of every thresholded decision of the run from its threshold
    (tools/README.md, "Decision margins", says what each kind means and in
    which unit).  Each entry: kind, margin, where."""

    KINDS = {
        "object_score": "|object score logit| (threshold 0), absolute",
        "iou_argmax": "best - second IoU prediction of a used argmax, absolute",
        "stability": "|stability score - thresh| of a single-mask output, absolute",
        "stability_count": "smallest token-0 logit shift / max|logit| that flips stability",
        "mem_binarise": "min |logit| / max|logit| of a mask binarised for memory",
        "fill_binarise": "min |logit| / max|logit| of a mask given to the hole fill",
        "non_overlap": "min top1 - top2 object logit / max|logit| where it matters",
        "mask_resize": "min |v - 0.5| of an add_new_mask resize (>= 0.5)",
        "bf16_midpoint": "|x - m| / |x|, m the bf16 rounding midpoint of stored memory x",
        "bf16_midpoint_scaled": "|x - m| / max|x| over the stored memory tensor",
    }
    PER_VALUE = ("bf16_midpoint", "bf16_midpoint_scaled")

    def __init__(self):
        self.entries = []
        self.bf16 = []  # per stored memory: (where, n, min, below ref, below fast)

    def add(self, kind, margin, where):
        self.entries.append((kind, float(margin), where))

    def add_bf16(self, x, where):
        x = np.asarray(x, np.float32)
        dist = bf16_midpoint_distance(x)
        ax = np.abs(x).astype(np.float64)
        for kind, d in (("bf16_midpoint", dist / np.maximum(ax, 1e-30)),
                        ("bf16_midpoint_scaled", dist / max(float(ax.max()), 1e-30))):
            i = int(np.argmin(d))
            self.bf16.append((kind, where, d.size, float(d.flat[i]), int((d < TOL_REF).sum()),
                              int((d < TOL_FAST).sum())))
            self.add(kind, d.flat[i], f"{where} value {i}")

    def summary(self):
        out = {}
        for kind in self.KINDS:
            ms = [(m, w) for k, m, w in self.entries if k == kind]
            if not ms:
                continue
            m, w = min(ms)
            d = {"count": len(ms), "min": m, "where": w,
                 "below_ref": sum(x < TOL_REF for x, _ in ms),
                 "below_fast": sum(x < TOL_FAST for x, _ in ms)}
            if kind in self.PER_VALUE:
                b = [e for e in self.bf16 if e[0] == kind]
                d["count"] = sum(e[2] for e in b)
                d["tensors"] = len(b)
                d["below_ref"] = sum(e[4] for e in b)
                d["below_fast"] = sum(e[5] for e in b)
            out[kind] = d
        return out

    def report(self, max_warn=40):
        lines = [f"decision margins (tolerances: ref {TOL_REF:g}, fast {TOL_FAST:g}):"]
        for kind, d in self.summary().items():
            unit = "values" if kind in self.PER_VALUE else "decisions"
            lines.append(f"  {kind:20s} {d['count']:6d} {unit}, min {d['min']:.3e} "
                         f"({d['where']}); below ref {d['below_ref']}, "
                         f"below fast {d['below_fast']}")
        warns = [(k, m, w) for k, m, w in self.entries if k not in self.PER_VALUE and m < TOL_FAST]
        for k, m, w in sorted(warns, key=lambda e: e[1])[:max_warn]:
            tag = "ref and fast" if m < TOL_REF else "fast"
            lines.append(f"  WARNING {k} margin {m:.3e} < {tag} tolerance: {w}")
        for kind, where, n, m, r, f_ in self.bf16:
            if f_:
                lines.append(f"  WARNING {kind}: {where}: {f_} of {n} values below the fast "
                             f"tolerance, {r} below ref, min {m:.3e}")
        return "\n".join(lines)


class Run:
    """Installs the wrappers on a SAM2VideoPredictor and collects what the
    dump needs besides the trace (decoded frames, @postprocess records)."""

    def __init__(self, predictor, tracer, full):
        self.p, self.tracer = predictor, tracer
        self.frames_u8, self.frame_files = [], []
        self.propagating = False
        self.last_post = None
        self.filled_pixels = 0  # low-res logits changed by fill_hole_area
        self.fill_calls, self.fill_skipped, self.fill_error = 0, 0, None
        self.upcasts = []         # (frame, obj) where the bf16 memory was upcast
        self._upcast_pending = False
        self._stability = None    # last _dynamic_multimask_via_stability result
        self.phase = ""           # where the calls come from (for margin reports)
        self.margins = Margins()
        modules = dict(predictor.named_modules())
        names = [n for n in modules if n] if full else video_parity_point_names(predictor)
        for name in names:
            tracer.wrap_module(name, modules[name])
        self._wrap_loader()
        self._wrap_predictor()

    def _wrap_loader(self):
        """@preprocess: the official JPEG loader decodes and resizes each frame
        (_load_img_as_tensor) and normalises the whole stack afterwards, so the
        per-frame records are made when load_video_frames_from_jpg_images
        returns: in/0 the decoded uint8 frame [H,W,3] (decoded again from the
        same file with the same PIL calls), out/0 the normalised frame as the
        image encoder receives it, [1,3,S,S] float32."""
        from PIL import Image
        import sam2.utils.misc as misc
        orig_load, orig_one = misc.load_video_frames_from_jpg_images, misc._load_img_as_tensor
        run = self

        def load_one(img_path, image_size):
            run.frame_files.append(img_path)
            run.frames_u8.append(np.array(Image.open(img_path).convert("RGB")))
            return orig_one(img_path, image_size)

        def load_all(*args, **kwargs):
            if kwargs.get("async_loading_frames"):
                raise SystemExit("async frame loading is not traced")
            images, h, w = orig_load(*args, **kwargs)
            for t, (u8, img) in enumerate(zip(run.frames_u8, images)):
                if u8.shape != (h, w, 3):
                    raise SystemExit(f"{run.frame_files[t]}: {u8.shape[:2]} != first frame")
                with run.tracer.context(frame_idx=t):
                    run.tracer.record("@preprocess", "function", (u8,), img[None])
            return images, h, w

        misc._load_img_as_tensor = load_one
        misc.load_video_frames_from_jpg_images = load_all

    def _wrap_predictor(self):
        p, tracer, run = self.p, self.tracer, self

        orig_feat = p._get_image_feature

        def get_image_feature(inference_state, frame_idx, batch_size):
            with tracer.context(frame_idx=frame_idx, obj_id=None):
                return orig_feat(inference_state, frame_idx, batch_size)

        orig_single = p._run_single_frame_inference

        def run_single(**kw):
            oid = obj_id_of_output_dict(kw["inference_state"], kw["output_dict"])
            with tracer.context(frame_idx=kw["frame_idx"], obj_id=oid):
                return orig_single(**kw)

        orig_mem = p._run_memory_encoder

        def run_mem(**kw):
            oid = obj_id_of_score(kw["inference_state"], kw["frame_idx"],
                                  kw["object_score_logits"])
            phase, run.phase = run.phase, "preflight"
            try:
                with tracer.context(frame_idx=kw["frame_idx"], obj_id=oid):
                    return orig_mem(**kw)
            finally:
                run.phase = phase

        orig_res = p._get_orig_video_res_output

        def orig_video_res(inference_state, any_res_masks):
            if p.non_overlap_masks and not run.propagating:  # add_new_*: consolidated
                run.non_overlap_margin(any_res_masks, inference_state["video_height"],
                                       inference_state["video_width"], run.phase)
            rec = None
            if run.propagating:  # the resize of each propagated frame's logits
                rec = tracer._begin("@postprocess", "SAM2VideoPredictor", (any_res_masks,), {})
            result = orig_res(inference_state, any_res_masks)
            if rec is not None:
                tracer._end(rec, result[1])
                run.last_post = rec
            return result

        import sam2.sam2_video_predictor as vp
        orig_fill = vp.fill_holes_in_mask_scores

        def fill_holes(mask, max_area):
            """The official fill, which warns and returns its input when
            sam2._C cannot label (no CUDA extension): count what it did."""
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = orig_fill(mask, max_area)
            skipped = False
            for w in caught:
                if "Skipping the post-processing" in str(w.message):
                    skipped = True
                    run.fill_error = str(w.message).split("\n")[0]
                else:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            run.fill_calls += 1
            run.fill_skipped += skipped
            if not skipped:
                run.filled_pixels += int((result != mask).sum())
                x = mask.abs()
                run.margins.add("fill_binarise", float(x.min() / x.max().clamp(min=1e-30)),
                                run.where())
            return result

        vp.fill_holes_in_mask_scores = fill_holes
        p._get_image_feature = get_image_feature
        p._run_single_frame_inference = run_single
        p._run_memory_encoder = run_mem
        p._get_orig_video_res_output = orig_video_res
        traced_prepare = tracer.wrap_callable(
            p._prepare_memory_conditioned_features,
            "@prepare_memory_conditioned_features", "SAM2Base")

        def prepare(*args, **kwargs):
            result = traced_prepare(*args, **kwargs)
            if run._upcast_pending:  # mark the record just completed
                rec = tracer.records[-1]
                assert rec.module == "@prepare_memory_conditioned_features"
                rec.attrs["samc_note"] = UPCAST_NOTE
                run._upcast_pending = False
            return result

        p._prepare_memory_conditioned_features = prepare
        self._wrap_memory_attention()
        self._wrap_margins()

    def where(self):
        t, o = self.tracer.current("frame_idx"), self.tracer.current("obj_id")
        return f"{self.phase}, frame {t}" + ("" if o is None else f", obj {o}")

    def _wrap_memory_attention(self):
        """sam2 issue 308: _prepare_memory_conditioned_features concatenates the
        object's stored memories (bfloat16, see _run_single_frame_inference /
        _run_memory_encoder) with its object pointers (float32); torch.cat
        promotes the result to float32 exactly.  When the object has no pointer
        (tracked before its first prompted frame in the propagation direction,
        with no earlier tracked frame) the memory stays bfloat16 and the
        cross-attention's v_proj (float32 weights) raises "mat1 and mat2 must
        have the same dtype" in fp32.  The official code runs under bf16
        autocast on CUDA, where it does not fail.  Here the memory is upcast
        exactly as torch.cat does when a pointer is present, and the
        memory_attention record, its layer records and the enclosing
        @prepare_memory_conditioned_features record get attr samc_note."""
        p, tracer, run = self.p, self.tracer, self
        traced = p.memory_attention.forward

        def forward(*args, **kwargs):
            memory = kwargs.get("memory")
            if memory is None or memory.dtype != torch.bfloat16:
                return traced(*args, **kwargs)
            if kwargs.get("num_obj_ptr_tokens", 0) != 0 or args:
                raise RuntimeError("bf16 memory with object pointers: unexpected")
            kwargs["memory"] = memory.float()
            run.upcasts.append((tracer.current("frame_idx"), tracer.current("obj_id")))
            run._upcast_pending = True
            with tracer.context(samc_note=UPCAST_NOTE):
                return traced(*args, **kwargs)

        p.memory_attention.forward = forward

    def _wrap_margins(self):
        """Record the distance of every thresholded decision from its
        threshold (Margins)."""
        p, tracer, run, m = self.p, self.tracer, self, self.margins
        dec = p.sam_mask_decoder
        orig_stab = dec._dynamic_multimask_via_stability

        def stab(all_mask_logits, all_iou_scores):
            result = orig_stab(all_mask_logits, all_iou_scores)
            run._stability = (dec._get_stability_scores(all_mask_logits[:, 0:1]),
                              all_mask_logits[:, 0], all_iou_scores)
            return result

        dec._dynamic_multimask_via_stability = stab
        traced_dec = dec.forward

        def dec_forward(*args, **kwargs):
            run._stability = None
            result = traced_dec(*args, **kwargs)
            multimask = kwargs.get("multimask_output")
            score = float(result[3].flatten()[0])
            where = run.where() + f", sam_mask_decoder call {tracer._calls['sam_mask_decoder'] - 1}"
            mask_path = bool(tracer.current("_mask_as_output"))
            m.add("object_score", abs(score), where + f" (score {score:+.4f}"
                  + (", mask prompt: gates the pointer)" if mask_path else ")"))
            # the mask / token choice matters unless the object is absent
            # (masks -> NO_OBJ_SCORE, pointer -> no_obj_ptr) or it is the
            # mask-prompt path (only token 0's pointer is used)
            used = (score > 0 or not (p.pred_obj_scores and p.fixed_no_obj_ptr)) \
                and not mask_path
            if used and multimask:
                iou = np.sort(result[1][0].numpy())[::-1]
                m.add("iou_argmax", iou[0] - iou[1], where + " (multimask)")
            elif used and run._stability is not None:
                sc, logits0, ious = run._stability
                sc = float(sc.flatten()[0])
                thresh = dec.dynamic_multimask_stability_thresh
                delta = dec.dynamic_multimask_stability_delta
                m.add("stability", abs(sc - thresh), where + f" (score {sc:.4f})")
                m.add("stability_count", stability_flip_shift(logits0, delta, thresh), where)
                if sc < thresh:  # fallback: argmax over tokens 1..3
                    iou = np.sort(ious[0, 1:].numpy())[::-1]
                    m.add("iou_argmax", iou[0] - iou[1], where + " (stability fallback)")
            return result

        dec.forward = dec_forward

        orig_mask_out = p._use_mask_as_output

        def use_mask_as_output(*args, **kwargs):
            with tracer.context(_mask_as_output=True):
                return orig_mask_out(*args, **kwargs)

        p._use_mask_as_output = use_mask_as_output

        orig_enc = p._encode_new_memory

        def encode_new_memory(**kw):
            feats, pos = orig_enc(**kw)
            where = run.where()
            if p.binarize_mask_from_pts_for_mem_enc and kw["is_mask_from_pts"]:
                x = kw["pred_masks_high_res"].abs()
                m.add("mem_binarise", float(x.min() / x.max().clamp(min=1e-30)), where)
            m.add_bf16(feats.numpy(), where + " maskmem_features")
            return feats, pos

        p._encode_new_memory = encode_new_memory

    def non_overlap_margin(self, any_res_masks, video_h, video_w, where):
        """_apply_non_overlapping_constraints on the video-resolution logits:
        the per-pixel argmax over objects changes the output only where the
        top logit is above -10 (the clamp)."""
        x = any_res_masks
        if x.size(0) < 2:
            return
        if x.shape[-2:] != (video_h, video_w):
            x = torch.nn.functional.interpolate(x, size=(video_h, video_w), mode="bilinear",
                                                align_corners=False)
        top = torch.topk(x[:, 0], 2, dim=0).values
        gap = (top[0] - top[1])[top[0] > -10.0]
        if gap.numel():
            self.margins.add("non_overlap", float(gap.min() / x.abs().max().clamp(min=1e-30)),
                             where)

    def propagate(self, state, start, max_frames, reverse):
        """Yields like propagate_in_video; the @postprocess record made just
        before each yield gets that frame's index."""
        self.propagating = True
        self.phase = "propagation"
        try:
            for frame_idx, obj_ids, masks in self.p.propagate_in_video(
                    state, start_frame_idx=start, max_frame_num_to_track=max_frames,
                    reverse=reverse):
                rec, self.last_post = self.last_post, None
                if rec is None:
                    raise RuntimeError(f"frame {frame_idx}: no @postprocess record")
                rec.attrs["frame_idx"] = frame_idx
                if self.p.non_overlap_masks:
                    self.non_overlap_margin(torch.from_numpy(rec.inputs[0][1]), state["video_height"],
                                            state["video_width"], f"propagation, frame {frame_idx}")
                yield frame_idx, list(obj_ids), masks
        finally:
            self.propagating = False


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def _create_group_untimed(self, name, track_order=None):
    """h5py.Group.create_group without object time tracking (one level)."""
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(self.id, name.encode(), gcpl=gcpl))


class VideoWriter(Writer):
    """Writer that adds the frame_idx / obj_id attrs to trace records and, in
    /trace, stores a tensor identical (dtype, shape, bytes) to one already
    written as a second hard link to that dataset instead of a copy.  Every
    reader sees an ordinary dataset (HDF5 datasets are hard links); the
    repeated image-encoder runs of a frame, the memory dict repeated in every
    @prepare_memory_conditioned_features record and module in/out slots
    that are the same tensor cost nothing."""

    def __init__(self, path, compress=False):
        # HDF5 1.8 object formats (compact groups: a third of the default's
        # per-group overhead, which dominates a trace of many small records).
        # Their object headers would store modification times (h5py turns
        # time tracking off for datasets only): groups are created without,
        # so the same command gives the same bytes.
        h5py.Group.create_group = _create_group_untimed
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        fapl.set_libver_bounds(h5py.h5f.LIBVER_V18, h5py.h5f.LIBVER_V18)
        fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
        fcpl.set_obj_track_times(False)  # the root group
        self.f = h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC,
                                           fapl=fapl, fcpl=fcpl))
        self.compress = compress
        self._seen = None

    def dataset(self, group, name, array):
        if self._seen is None:
            return super().dataset(group, name, array)
        array = np.ascontiguousarray(array)
        key = (array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest())
        if key in self._seen:
            group[name] = self.f[self._seen[key]]
            return group[name]
        d = super().dataset(group, name, array)
        self._seen[key] = d.name
        return d

    def trace(self, records):
        self._seen = {}
        root = self.f.create_group("trace")
        for i, rec in enumerate(records):
            g = root.create_group(f"{i:06d}")
            set_str_attr(g, "module", rec.module)
            g.attrs.create("call", np.int64(rec.call))
            set_str_attr(g, "class", rec.cls)
            for k in ("frame_idx", "obj_id"):
                if k in rec.attrs:
                    g.attrs.create(k, np.int64(rec.attrs[k]))
            if "samc_note" in rec.attrs:
                set_str_attr(g, "samc_note", rec.attrs["samc_note"])
            self.slots(g.create_group("in"), rec.inputs)
            self.slots(g.create_group("out"), rec.outputs)
        self._seen = None


def effective_fill_hole_area(run, predictor):
    """(value for config_json, note): what the run really applied.
    fill_holes_in_mask_scores needs sam2._C (a CUDA extension); without it
    the official code warns and returns the mask unchanged on every call, so
    the run is that of fill_hole_area 0."""
    area = predictor.fill_hole_area
    if area <= 0:
        return area, ""
    if run.fill_calls and run.fill_skipped == run.fill_calls:
        return 0, (f"the builder sets fill_hole_area={area}, but the official "
                   f"fill_holes_in_mask_scores skipped all {run.fill_calls} calls "
                   f"({run.fill_error}): the run is that of fill_hole_area 0")
    if run.fill_skipped:
        raise SystemExit(f"hole fill skipped in {run.fill_skipped} of {run.fill_calls} calls")
    if sam2_shims.connected_components_installed():
        return area, (f"hole fill ran through samc's CPU stand-in for sam2._C "
                      f"(--fill-holes-shim, tools/sam2_shims.py), {run.fill_calls} calls, "
                      f"{run.filled_pixels} low-res logits changed; the official code "
                      "needs the CUDA extension for this")
    return area, f"hole fill ran through sam2._C, {run.fill_calls} calls"


def write_inputs(w, run, prompts, args, start):
    g = w.f.create_group("inputs")
    set_str_attr(g, "task", "video")
    w.dataset(g, "frames_u8", np.stack(run.frames_u8))
    set_attr(g, "reverse", bool(args.reverse))
    g.attrs.create("start_frame_idx", np.int64(start))
    if args.max_frames is not None:
        g.attrs.create("max_frame_num_to_track", np.int64(args.max_frames))
    # The predictor's options are in /model config_json (write_model_video).
    set_attr(g, "note_start_frame_given", args.start is not None)
    g.attrs.create("note_fill_hole_pixels", np.int64(run.filled_pixels))
    set_str_attr(g, "note_frame_files", json.dumps(run.frame_files))
    gp = g.create_group("prompts")
    for k, p in enumerate(prompts):
        gk = gp.create_group(str(k))
        gk.attrs.create("frame_idx", np.int64(p["frame"]))
        gk.attrs.create("obj_id", np.int64(p["obj"]))
        set_attr(gk, "clear_old_points", bool(p["clear"]))
        w.dataset(gk, "point_coords", np.array(p["points"], np.float32).reshape(-1, 2))
        w.dataset(gk, "point_labels", np.array(p["labels"], np.int32).reshape(-1))
        if p["box"] is not None:
            w.dataset(gk, "box", np.array(p["box"], np.float32))
        if p["mask"] is not None:
            w.dataset(gk, "mask", p["mask_array"].astype(np.uint8))
            set_str_attr(gk, "note_mask", p["mask"])
        set_str_attr(gk, "note_prompt", p["text"])


def write_outputs(w, prompt_results, frames, state):
    g = w.f.create_group("outputs")
    gf = g.create_group("frames")
    order = []
    for t, obj_ids, masks in frames:
        order.append(t)
        gt = gf.create_group(str(t))
        for i, oid in enumerate(obj_ids):
            go = gt.create_group(str(oid))
            w.dataset(go, "mask_logits", to_array(masks[i, 0]))
            od = state["output_dict_per_obj"][i]
            cond = t in od["cond_frame_outputs"]
            out = od["cond_frame_outputs" if cond else "non_cond_frame_outputs"][t]
            set_attr(go, "note_cond_frame", cond)
            go.attrs.create("note_object_score_logit",
                            np.float64(out["object_score_logits"].flatten()[0]))
    gf.attrs.create("note_processing_order", np.array(order, np.int64))
    # samc extension: what each add_new_points_or_box / add_new_mask returned
    gp = g.create_group("prompts")
    for k, (obj_ids, masks) in enumerate(prompt_results):
        gk = gp.create_group(str(k))
        w.dataset(gk, "mask_logits", to_array(masks[:, 0]))
        gk.attrs.create("obj_ids", np.array(obj_ids, np.int64))


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def mask_resize_margin(margins, mask, s, where):
    """add_new_mask resizes a mask that is not SxS: bilinear with antialias,
    then >= 0.5 (the same call as the official code)."""
    if mask.shape == (s, s):
        return
    x = torch.nn.functional.interpolate(torch.tensor(mask, dtype=torch.bool)[None, None].float(),
                                        size=(s, s), align_corners=False, mode="bilinear",
                                        antialias=True)
    margins.add("mask_resize", float((x - 0.5).abs().min()), where)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.set_defaults(threads=1)
    g = p.add_argument_group("video")
    g.add_argument("--frames", help="folder of JPEG frames <int>.jpg (official loader)")
    g.add_argument("--clip-size", default="96x128", help="HxW of the synthetic clip")
    g.add_argument("--clip-frames", type=int, default=5, help="frames of the synthetic clip")
    g.add_argument("--clip-seed", type=int, help="seed of the synthetic clip (default --seed)")
    g.add_argument("--jpeg-quality", type=int, default=90)
    g.add_argument("--clip-occlude", action="append", default=[], metavar="F[,F]:x0,y0,x1,y1",
                   help="synthetic clip: a flat grey rectangle over frames F (repeatable)")
    g.add_argument("--prompt", action="append", default=[],
                   help="one prompt, see the syntax above (repeatable, in order)")
    g.add_argument("--start", type=int, help="start_frame_idx (default: official, "
                   "the earliest frame with prompts)")
    g.add_argument("--max-frames", type=int, help="max_frame_num_to_track")
    g.add_argument("--reverse", action="store_true", help="propagate in reverse")
    g.add_argument("--non-overlap-masks", action="store_true",
                   help="SAM2VideoPredictor(non_overlap_masks=True), as vos_inference.py")
    g.add_argument("--fill-holes-shim", action="store_true",
                   help="install samc's CPU connected-components stand-in for the CUDA "
                   "extension sam2._C, so that fill_hole_area > 0 really fills (the "
                   "official code skips the fill without sam2._C); config_json and "
                   "/model note_fill_hole_area say so")
    g.add_argument("--margins-json", help="also write the decision margins summary here")
    g.add_argument("--variant", help="free text for /model variant (default: --config)")
    g.add_argument("--full", action="store_true", help="record every module")
    g.add_argument("--compress", action="store_true", help="gzip datasets")
    g.add_argument("--out", required=True, help="output .h5")
    args = p.parse_args(argv)
    if args.non_overlap_masks:
        args.overrides = args.overrides + ["model.non_overlap_masks=true"]

    built = sam2_build.build_from_args(args, video=True)
    predictor = built.model
    from sam2.sam2_video_predictor import SAM2VideoPredictor
    if type(predictor) is not SAM2VideoPredictor:
        raise SystemExit(f"built {type(predictor).__name__}, expected SAM2VideoPredictor")
    if args.fill_holes_shim:
        if predictor.fill_hole_area <= 0:
            raise SystemExit("--fill-holes-shim with fill_hole_area 0: nothing to fill")
        sam2_shims.install_connected_components()

    folder = args.frames
    if folder is None:
        folder = os.path.splitext(args.out)[0] + "_frames"
        h, w = parse_hw(args.clip_size)
        seed = args.seed if args.clip_seed is None else args.clip_seed
        occ = [parse_occlusion(t) for t in args.clip_occlude]
        write_clip(synth_clip(h, w, args.clip_frames, seed, occ), folder, args.jpeg_quality)

    prompts = [parse_prompt(t) for t in args.prompt]
    if not prompts:
        raise SystemExit("give at least one --prompt")
    tracer = VideoTracer()
    run = Run(predictor, tracer, args.full)
    prompt_results, frames = [], []
    with torch.no_grad():
        state = predictor.init_state(video_path=folder)
        vh, vw = state["video_height"], state["video_width"]
        for k, p_ in enumerate(prompts):
            run.phase = f"prompt {k}"
            if p_["mask"] is not None:
                p_["mask_array"] = make_mask(p_["mask"], vh, vw)
                mask_resize_margin(run.margins, p_["mask_array"], predictor.image_size,
                                   run.phase)
                _, obj_ids, masks = predictor.add_new_mask(
                    state, p_["frame"], p_["obj"], p_["mask_array"])
            else:
                has_pts = bool(p_["points"])
                _, obj_ids, masks = predictor.add_new_points_or_box(
                    state, p_["frame"], p_["obj"],
                    points=np.array(p_["points"], np.float32) if has_pts else None,
                    labels=np.array(p_["labels"], np.int32) if has_pts else None,
                    clear_old_points=p_["clear"],
                    box=np.array(p_["box"], np.float32) if p_["box"] is not None else None)
            prompt_results.append((list(obj_ids), masks))
        for t, obj_ids, masks in run.propagate(state, args.start, args.max_frames,
                                               args.reverse):
            frames.append((t, obj_ids, masks))
    if not frames:
        raise SystemExit("propagation yielded no frame")
    start = frames[0][0]
    fill_value, fill_note = effective_fill_hole_area(run, predictor)
    built.model_cfg["fill_hole_area"] = fill_value
    margins = run.margins.summary()

    w = VideoWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    set_str_attr(w.f, "note_margins", json.dumps(margins))
    write_model(w, built, args)
    gm = w.f["model"]
    set_str_attr(gm, "note_builder", "build_sam2_video_predictor(config, "
                 "apply_postprocessing=%s, vos_optimized=False), eval, float32, CPU"
                 % (not args.no_postprocessing))
    set_str_attr(gm, "note_defaults_added", json.dumps(built.defaults_added))
    if fill_note:
        set_str_attr(gm, "note_fill_hole_area", fill_note)
    if run.upcasts:
        set_str_attr(gm, "note_bf16_memory_upcast", json.dumps(
            [{"frame_idx": t, "obj_id": o} for t, o in run.upcasts]))
    write_inputs(w, run, prompts, args, start)
    write_outputs(w, prompt_results, frames, state)
    w.trace(tracer.records)
    w.close()
    for t, obj_ids, masks in frames:
        scores = []
        for i in range(len(obj_ids)):
            od = state["output_dict_per_obj"][i]
            out = od["cond_frame_outputs"].get(t) or od["non_cond_frame_outputs"][t]
            scores.append(round(float(out["object_score_logits"].flatten()[0]), 3))
        print(f"frame {t}: objs {obj_ids} score {scores} "
              f"mask>0 {[round(float((m > 0).float().mean()), 3) for m in masks]}")
    if fill_note:
        print(fill_note)
    for t, o in run.upcasts:
        print(f"frame {t} obj {o}: no object pointer in the memory bank: bf16 memory upcast "
              "to float32 (sam2 issue 308), records marked samc_note")
    print(run.margins.report())
    if args.margins_json:
        with open(args.margins_json, "w") as f:
            json.dump({"summary": margins, "entries": run.margins.entries,
                       "bf16": run.margins.bf16}, f, indent=1)
    print(f"wrote {args.out}: {len(tracer.records)} trace records")


if __name__ == "__main__":
    main()
