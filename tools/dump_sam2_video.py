#!/usr/bin/python3
"""Run the official SAM 2 video predictor on a folder of JPEG frames, a list
of prompts and one propagation, and write a parity dump
(shared/docs/PARITY_DUMP_FORMAT.md, video task).

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
(--clip-size HxW, --clip-frames N, --clip-seed S, --jpeg-quality Q).

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
"""

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import sys

import h5py
import numpy as np
import torch

import sam2_build
import sam2_shims
from dump_sam2 import parity_point_names, write_model
from parity_trace import Tracer, Writer, set_attr, set_str_attr, to_array
from synth_image import parse_hw

PREDICTOR_ARGS = ("fill_hole_area", "non_overlap_masks",
                  "clear_non_cond_mem_around_input", "add_all_frames_to_correct_as_cond")


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

def synth_clip(h, w, n, seed):
    """n frames [h,w,3] uint8: a smooth colour gradient with mild noise and
    four soft-edged shapes moving linearly; the last one leaves the frame."""
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


class Run:
    """Installs the wrappers on a SAM2VideoPredictor and collects what the
    dump needs besides the trace (decoded frames, @postprocess records)."""

    def __init__(self, predictor, tracer, full):
        self.p, self.tracer = predictor, tracer
        self.frames_u8, self.frame_files = [], []
        self.propagating = False
        self.last_post = None
        self.filled_pixels = 0  # low-res logits changed by fill_hole_area
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
            with tracer.context(frame_idx=kw["frame_idx"], obj_id=oid):
                return orig_mem(**kw)

        orig_res = p._get_orig_video_res_output

        def orig_video_res(inference_state, any_res_masks):
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
            result = orig_fill(mask, max_area)
            run.filled_pixels += int((result != mask).sum())
            return result

        vp.fill_holes_in_mask_scores = fill_holes
        p._get_image_feature = get_image_feature
        p._run_single_frame_inference = run_single
        p._run_memory_encoder = run_mem
        p._get_orig_video_res_output = orig_video_res
        p._prepare_memory_conditioned_features = tracer.wrap_callable(
            p._prepare_memory_conditioned_features,
            "@prepare_memory_conditioned_features", "SAM2Base")

    def propagate(self, state, start, max_frames, reverse):
        """Yields like propagate_in_video; the @postprocess record made just
        before each yield gets that frame's index."""
        self.propagating = True
        try:
            for frame_idx, obj_ids, masks in self.p.propagate_in_video(
                    state, start_frame_idx=start, max_frame_num_to_track=max_frames,
                    reverse=reverse):
                rec, self.last_post = self.last_post, None
                if rec is None:
                    raise RuntimeError(f"frame {frame_idx}: no @postprocess record")
                rec.attrs["frame_idx"] = frame_idx
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
            self.slots(g.create_group("in"), rec.inputs)
            self.slots(g.create_group("out"), rec.outputs)
        self._seen = None


def effective_fill_hole_area(predictor):
    """fill_holes_in_mask_scores needs sam2._C; main() installs the CPU
    labelling shim when fill_hole_area > 0, so the fill really runs."""
    return float(predictor.fill_hole_area)


def write_inputs(w, run, prompts, args, start, predictor):
    g = w.f.create_group("inputs")
    set_str_attr(g, "task", "video")
    w.dataset(g, "frames_u8", np.stack(run.frames_u8))
    set_attr(g, "reverse", bool(args.reverse))
    g.attrs.create("start_frame_idx", np.int64(start))
    if args.max_frames is not None:
        g.attrs.create("max_frame_num_to_track", np.int64(args.max_frames))
    # samc extension (readers may ignore): the predictor's constructor args
    # (after the builder's overrides) that change the outputs.
    g.attrs.create("fill_hole_area", np.float64(effective_fill_hole_area(predictor)))
    for name in PREDICTOR_ARGS[1:]:
        set_attr(g, name, bool(getattr(predictor, name)))
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
    g.add_argument("--prompt", action="append", default=[],
                   help="one prompt, see the syntax above (repeatable, in order)")
    g.add_argument("--start", type=int, help="start_frame_idx (default: official, "
                   "the earliest frame with prompts)")
    g.add_argument("--max-frames", type=int, help="max_frame_num_to_track")
    g.add_argument("--reverse", action="store_true", help="propagate in reverse")
    g.add_argument("--non-overlap-masks", action="store_true",
                   help="SAM2VideoPredictor(non_overlap_masks=True), as vos_inference.py")
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
    if predictor.fill_hole_area > 0:
        sam2_shims.install_connected_components()

    folder = args.frames
    if folder is None:
        folder = os.path.splitext(args.out)[0] + "_frames"
        h, w = parse_hw(args.clip_size)
        seed = args.seed if args.clip_seed is None else args.clip_seed
        write_clip(synth_clip(h, w, args.clip_frames, seed), folder, args.jpeg_quality)

    prompts = [parse_prompt(t) for t in args.prompt]
    if not prompts:
        raise SystemExit("give at least one --prompt")
    tracer = VideoTracer()
    run = Run(predictor, tracer, args.full)
    prompt_results, frames = [], []
    with torch.no_grad():
        state = predictor.init_state(video_path=folder)
        vh, vw = state["video_height"], state["video_width"]
        for p_ in prompts:
            if p_["mask"] is not None:
                p_["mask_array"] = make_mask(p_["mask"], vh, vw)
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
        try:
            for t, obj_ids, masks in run.propagate(state, args.start, args.max_frames,
                                                   args.reverse):
                frames.append((t, obj_ids, masks))
        except RuntimeError as e:
            if "same dtype" not in str(e):
                raise
            raise SystemExit(
                f"{e}\nThe official code fails in fp32 (it expects bf16 autocast) when an "
                "object is tracked on a frame before any of its prompted frames in the "
                "propagation direction: its memory is then only the bf16 maskmem_features "
                "(no object pointer to promote torch.cat to fp32). Start propagation at or "
                "after every object's first prompted frame (--start).")
    if not frames:
        raise SystemExit("propagation yielded no frame")
    start = frames[0][0]

    w = VideoWriter(args.out, compress=args.compress)
    set_str_attr(w.f, "format", "samc-parity-dump")
    w.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w.f, "note_command", shlex.join(sys.argv))
    write_model(w, built, args)
    write_inputs(w, run, prompts, args, start, predictor)
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
    print(f"wrote {args.out}: {len(tracer.records)} trace records")


if __name__ == "__main__":
    main()
