#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check image-task parity dumps against PARITY_DUMP_FORMAT.md (version 1)
and for internal consistency:
  - root, /model, /weights, /inputs, /outputs layout, dtypes and shapes;
  - /trace: 6-digit names 0..n-1 without gaps, attrs module/call/class,
    per-module call counts 0,1,2,... in completion order, and the exact
    parity-point sequence of the image task;
  - numbers: @preprocess in/0 == image; its out/0 == image_encoder in/0 and
    == an independent float64 numpy antialiased-bilinear + normalize (1e-5);
    prompt-encoder points == prompts scaled to S (box corners first);
    sam_mask_decoder out/0 clamped == low_res_masks, out/1 == iou_predictions;
    @postprocess in/0 == decoder out/0, in/1.* == (H, W), out/0[0] == masks.
Video-task dumps (tools/dump_sam2_video.py) are recognised by /inputs@task
and checked by check_video_file (see there); SAM 3 dumps (task sam3_image,
tools/dump_sam3.py) by tools/check_sam3.py, tasks sam3_video / sam3_inst
(tools/dump_sam3_video.py, dump_sam3_inst.py) by tools/check_sam3_video.py.
Usage: /usr/bin/python3 tools/check_dump.py FILE.h5 [...]
"""

import json
import sys

import h5py
import numpy as np


class Failed(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failed(msg)


def str_attr(obj, name):
    v = obj.attrs[name]
    expect(isinstance(v, str), f"{obj.name}@{name} is not a string")
    tid = obj.attrs.get_id(name).get_type()
    expect(tid.is_variable_str() and tid.get_cset() == h5py.h5t.CSET_UTF8,
           f"{obj.name}@{name} is not a variable-length UTF-8 string")
    return v


# --------------------------------------------------------------------------
# Independent reference of the image predictor's preprocessing
# --------------------------------------------------------------------------

def aa_bilinear_matrix(n_in, n_out):
    """Weights of torch's antialiased bilinear resize along one axis
    (align_corners=False, downsampling): support = scale, triangle filter
    stretched by the scale, taps normalised to sum 1.  Like torch for float
    input, scale, centre, tap weights and their sum are float32 (C++ mixes in
    doubles where the source does); without this the reference is off by
    ~2e-5 at non-integer scales."""
    f32 = np.float32
    scale = f32(n_in) / f32(n_out)
    if scale <= 1.0:
        return plain_bilinear_matrix(n_in, n_out, scale)
    support = f32(scale)
    invscale = f32(1.0 / float(scale))
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = f32(float(scale) * (i + 0.5))
        lo = max(int(float(center - support) + 0.5), 0)
        hi = min(int(float(center + support) + 0.5), n_in)
        w = []
        for j in range(lo, hi):
            t = abs(f32((float(f32(j) - center) + 0.5) * float(invscale)))
            w.append(f32(1.0 - t) if t < 1.0 else f32(0.0))
        total = f32(0.0)
        for x in w:
            total = f32(total + x)
        m[i, lo:hi] = [float(x / total) for x in w]
    return m


def plain_bilinear_matrix(n_in, n_out, scale):
    """Upsampling (antialias has no effect): src = (i+0.5)*scale - 0.5,
    clamped at 0, upper neighbour clamped to n_in-1; float32 as torch."""
    f32 = np.float32
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        src = max(f32(scale * f32(i + 0.5) - f32(0.5)), f32(0.0))
        i0 = int(src)
        i1 = min(i0 + 1, n_in - 1)
        lam = f32(src - f32(i0))
        m[i, i0] += float(f32(1.0) - lam)
        m[i, i1] += float(lam)
    return m


def reference_preprocess(image, s):
    x = image.astype(np.float64).transpose(2, 0, 1) / 255.0
    if x.shape[1:] != (s, s):
        my, mx = aa_bilinear_matrix(x.shape[1], s), aa_bilinear_matrix(x.shape[2], s)
        x = np.matmul(np.matmul(my, x), mx.T)  # rows, then columns
    mean = np.array([0.485, 0.456, 0.406])[:, None, None]
    std = np.array([0.229, 0.224, 0.225])[:, None, None]
    return ((x - mean) / std)[None]


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------

def check_root_model_weights(f):
    expect(str_attr(f, "format") == "samc-parity-dump", "format attr")
    expect(int(f.attrs["format_version"]) == 1, "format_version")
    m = f["model"]
    for a in ("family", "variant", "config_json", "source", "torch_version"):
        str_attr(m, a)
    expect(m.attrs["family"] == "sam2", "family")
    cfg = json.loads(m.attrs["config_json"])
    expect("_target_" in cfg, "config_json keeps _target_")
    int(m.attrs["seed"])
    for k, d in f["weights"].items():
        expect(d.dtype == np.float32, f"weight {k} dtype {d.dtype}")
    return cfg


def check_inputs_outputs(f, s):
    inp = f["inputs"]
    expect(str_attr(inp, "task") == "image", "task")
    img = inp["image_u8"]
    expect(img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3, "image_u8")
    h, w = img.shape[:2]
    keys = sorted(inp["prompts"].keys(), key=int)
    expect(keys == [str(i) for i in range(len(keys))], "prompt numbering")
    expect(sorted(f["outputs"].keys(), key=int) == keys, "outputs match prompts")
    for k in keys:
        p = inp["prompts"][k]
        pc, pl = p["point_coords"], p["point_labels"]
        expect(pc.dtype == np.float32 and pc.ndim == 2 and pc.shape[1] == 2, "point_coords")
        expect(pl.dtype == np.int32 and (pl.shape == (pc.shape[0],) or
                                         (pc.shape[0] == 0 and pl.shape == (0,))), "labels")
        if "box" in p:
            expect(p["box"].shape == (4,) and p["box"].dtype == np.float32, "box")
        if "mask_input" in p:
            expect(p["mask_input"].shape == (1, s // 4, s // 4), "mask_input shape")
        c = 3 if int(p.attrs["multimask_output"]) else 1
        o = f["outputs"][k]
        expect(o["masks"].shape == (c, h, w), f"outputs/{k}/masks {o['masks'].shape}")
        expect(o["iou_predictions"].shape == (c,), "iou shape")
        expect(o["low_res_masks"].shape == (c, s // 4, s // 4), "low_res shape")
        for n in ("masks", "iou_predictions", "low_res_masks"):
            expect(o[n].dtype == np.float32, f"{n} dtype")
    return keys, (h, w)


def expected_sequence(cfg, num_prompts):
    stages = cfg["image_encoder"]["trunk"].get("stages", [2, 3, 16, 3])
    seq = (["@preprocess", "image_encoder.trunk.patch_embed"]
           + [f"image_encoder.trunk.blocks.{i}" for i in range(sum(stages))]
           + ["image_encoder.trunk", "image_encoder.neck", "image_encoder"])
    per_prompt = (["sam_prompt_encoder"]
                  + [f"sam_mask_decoder.transformer.layers.{i}" for i in range(2)]
                  + ["sam_mask_decoder.transformer", "sam_mask_decoder", "@postprocess"])
    return seq + per_prompt * num_prompts


def check_trace(f, cfg, num_prompts):
    tr = f["trace"]
    names = sorted(tr.keys())
    expect(names == [f"{i:06d}" for i in range(len(names))], "trace numbering has gaps")
    counts, seq, by_module = {}, [], {}
    for n in names:
        g = tr[n]
        mod, cls = str_attr(g, "module"), str_attr(g, "class")
        call = int(g.attrs["call"])
        expect(call == counts.get(mod, 0), f"{n} {mod}: call {call}, expected {counts.get(mod, 0)}")
        counts[mod] = call + 1
        expect("in" in g and "out" in g, f"{n}: in/out groups")
        seq.append(mod)
        by_module.setdefault(mod, []).append(g)
    wanted = expected_sequence(cfg, num_prompts)
    got = [m for m in seq if m in set(wanted)]
    expect(got == wanted, "parity-point sequence differs:\n" + "\n".join(
        f"  {a} | {b}" for a, b in zip(got, wanted) if a != b))
    return by_module


# --------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------

def check_numbers(f, by_module, keys, hw, s):
    img = f["inputs/image_u8"][:]
    pre = by_module["@preprocess"][0]
    expect(np.array_equal(pre["in/0"][:], img), "@preprocess in/0 != image")
    x = pre["out/0"][:]
    expect(x.shape == (1, 3, s, s), "@preprocess out/0 shape")
    expect(np.array_equal(by_module["image_encoder"][0]["in/0"][:], x),
           "image_encoder in/0 != @preprocess out/0")
    ref = reference_preprocess(img, s)
    err = float(np.abs(x - ref).max())
    expect(err < 1e-5, f"preprocess vs numpy float64 reference: {err}")
    h, w = hw
    for i, k in enumerate(keys):
        p, o = f["inputs/prompts"][k], f["outputs"][k]
        pe, dec, post = (by_module[m][i] for m in
                         ("sam_prompt_encoder", "sam_mask_decoder", "@postprocess"))
        pts = [p["box"][:].reshape(2, 2)] if "box" in p else []
        pts.append(p["point_coords"][:])
        pts = np.concatenate(pts) * np.array([s / w, s / h], np.float32)
        if len(pts):
            expect(np.allclose(pe["in/points.0"][0], pts, rtol=1e-6, atol=1e-4),
                   f"prompt {k}: prompt-encoder points")
        if "mask_input" in p:
            expect(np.array_equal(pe["in/masks"][:], p["mask_input"][:][None]), "mask_input")
        low = dec["out/0"][:]
        expect(np.array_equal(np.clip(low[0], -32, 32), o["low_res_masks"][:]),
               f"prompt {k}: decoder out/0 vs low_res_masks")
        expect(np.array_equal(dec["out/1"][0], o["iou_predictions"][:]), f"prompt {k}: iou")
        expect(int(dec["in"].attrs["multimask_output"]) == int(p.attrs["multimask_output"]),
               f"prompt {k}: multimask attr")
        expect(np.array_equal(post["in/0"][:], low), f"prompt {k}: postprocess in/0")
        expect((int(post["in"].attrs["1.0"]), int(post["in"].attrs["1.1"])) == (h, w),
               f"prompt {k}: postprocess orig_hw")
        expect(np.array_equal(post["out/0"][0], o["masks"][:]), f"prompt {k}: masks")
    return err


def check_file(path):
    with h5py.File(path, "r") as f:
        cfg = check_root_model_weights(f)
        s = int(cfg["image_size"])
        keys, hw = check_inputs_outputs(f, s)
        by_module = check_trace(f, cfg, len(keys))
        err = check_numbers(f, by_module, keys, hw, s)
        return len(f["trace"]), err

# --------------------------------------------------------------------------
# Video task
# --------------------------------------------------------------------------

def pil_bicubic_matrix(n_in, n_out):
    """Pillow 9.4 Resample.c for BICUBIC (a = -0.5) along one axis: support
    2*max(scale,1), taps normalised in double, then 22-bit fixed point
    (round half away from zero).  Returns (int coefficient matrix, or None
    when the axis keeps its size: Pillow skips that pass)."""
    if n_in == n_out:
        return None
    bits = 22
    scale = n_in / n_out
    fscale = max(scale, 1.0)
    support = 2.0 * fscale

    def cubic(x):
        a = -0.5
        x = abs(x)
        if x < 1.0:
            return ((a + 2.0) * x - (a + 3.0)) * x * x + 1
        if x < 2.0:
            return (((x - 5) * x + 8) * x - 4) * a
        return 0.0

    m = np.zeros((n_out, n_in), np.int64)
    for i in range(n_out):
        center = (i + 0.5) * scale
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = [cubic((j - center + 0.5) / fscale) for j in range(lo, hi)]
        total = sum(w)
        for j, x in zip(range(lo, hi), w):
            k = x / total if total != 0.0 else x
            m[i, j] = int(-0.5 + k * (1 << bits)) if k < 0 else int(0.5 + k * (1 << bits))
    return m


def pil_pass(x, m, axis):
    """One 8-bit pass: sum of uint8 * int coeffs + 2^21, >> 22, clamp."""
    if m is None:
        return x
    acc = np.tensordot(m, x.astype(np.int64), axes=([1], [axis]))
    acc = np.moveaxis(acc, 0, axis) + (1 << 21)
    return np.clip(acc >> 22, 0, 255).astype(np.uint8)


def reference_video_preprocess(frame, s):
    """utils/misc.py _load_img_as_tensor + the loader's normalisation:
    PIL resize((s, s)) (bicubic, horizontal pass first), /255.0 in float64,
    stored as float32, then (x - mean) / std in float32."""
    h, w = frame.shape[:2]
    x = pil_pass(frame, pil_bicubic_matrix(w, s), 1)
    x = pil_pass(x, pil_bicubic_matrix(h, s), 0)
    x = (x / 255.0).astype(np.float32).transpose(2, 0, 1)
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((x - mean) / std)[None]


def processing_order(num_frames, start, max_frames, reverse):
    """SAM2VideoPredictor.propagate_in_video's frame order."""
    if max_frames is None:
        max_frames = num_frames
    if reverse:
        end = max(start - max_frames, 0)
        return list(range(start, end - 1, -1)) if start > 0 else []
    end = min(start + max_frames, num_frames - 1)
    return list(range(start, end + 1))


# Scalar constructor options of SAM2VideoPredictor (its own, then SAM2Base's)
# at the pinned commit: every one must be a key of config_json's model section.
VIDEO_PREDICTOR_OPTIONS = (
    "fill_hole_area", "non_overlap_masks", "clear_non_cond_mem_around_input",
    "add_all_frames_to_correct_as_cond",
    "num_maskmem", "image_size", "backbone_stride", "sigmoid_scale_for_mem_enc",
    "sigmoid_bias_for_mem_enc", "binarize_mask_from_pts_for_mem_enc",
    "use_mask_input_as_output_without_sam", "max_cond_frames_in_attn",
    "directly_add_no_mem_embed", "use_high_res_features_in_sam", "multimask_output_in_sam",
    "multimask_min_pt_num", "multimask_max_pt_num", "multimask_output_for_tracking",
    "use_multimask_token_for_obj_ptr", "iou_prediction_use_sigmoid",
    "memory_temporal_stride_for_eval", "non_overlap_masks_for_mem_enc",
    "use_obj_ptrs_in_encoder", "max_obj_ptrs_in_encoder", "add_tpos_enc_to_obj_ptrs",
    "proj_tpos_enc_in_obj_ptrs", "use_signed_tpos_enc_to_obj_ptrs",
    "only_obj_ptrs_in_the_past_for_eval", "pred_obj_scores", "pred_obj_scores_mlp",
    "fixed_no_obj_ptr", "soft_no_obj_ptr", "use_mlp_for_obj_ptr_proj", "no_obj_embed_spatial",
    "sam_mask_decoder_extra_args", "compile_image_encoder")

IMAGE_LEVEL = ("@preprocess", "@postprocess", "image_encoder")
PER_OBJECT = ("@prepare_memory_conditioned_features", "sam_prompt_encoder",
              "sam_mask_decoder", "memory_encoder", "memory_attention", "obj_ptr_proj")
# (sam_mask_decoder.conv_s0 / conv_s1 run in forward_image: image level)
PER_OBJECT_CHILDREN = ("sam_mask_decoder.transformer.", "memory_encoder.", "memory_attention.")


def check_video_inputs(f, s):
    inp = f["inputs"]
    fr = inp["frames_u8"]
    expect(fr.dtype == np.uint8 and fr.ndim == 4 and fr.shape[3] == 3, "frames_u8")
    t_count, h, w = fr.shape[:3]
    for a in ("reverse", "start_frame_idx"):
        expect(a in inp.attrs, f"/inputs@{a} missing")
    for a in VIDEO_PREDICTOR_OPTIONS:  # they live in config_json only
        expect(a not in inp.attrs, f"/inputs@{a}: predictor options belong in config_json")
    expect(int(inp.attrs["reverse"]) in (0, 1), "reverse is 0/1")
    keys = sorted(inp["prompts"].keys(), key=int)
    expect(keys and keys == [str(i) for i in range(len(keys))], "prompt numbering")
    prompts, obj_ids = [], []
    for k in keys:
        p = inp["prompts"][k]
        for a in ("frame_idx", "obj_id", "clear_old_points"):
            expect(a in p.attrs, f"prompt {k}: @{a} missing")
        t, oid = int(p.attrs["frame_idx"]), int(p.attrs["obj_id"])
        expect(0 <= t < t_count, f"prompt {k}: frame_idx {t}")
        pc, pl = p["point_coords"], p["point_labels"]
        expect(pc.dtype == np.float32 and pc.ndim == 2 and pc.shape[1] == 2, "point_coords")
        expect(pl.dtype == np.int32 and pl.shape == (pc.shape[0],), "point_labels")
        box = p["box"][:] if "box" in p else None
        if box is not None:
            expect(box.shape == (4,) and box.dtype == np.float32, "box")
            expect(int(p.attrs["clear_old_points"]) == 1, f"prompt {k}: box needs clear")
        mask = p["mask"][:] if "mask" in p else None
        if mask is not None:
            expect(mask.dtype == np.uint8 and mask.ndim == 2 and set(np.unique(mask)) <= {0, 1},
                   f"prompt {k}: mask is 2-D uint8 0/1")
            expect(pc.shape[0] == 0 and box is None, f"prompt {k}: mask with points/box")
        else:
            expect(pc.shape[0] > 0 or box is not None, f"prompt {k}: empty prompt")
        prompts.append({"frame": t, "obj": oid, "clear": int(p.attrs["clear_old_points"]),
                        "coords": pc[:], "labels": pl[:], "box": box, "mask": mask})
        if oid not in obj_ids:
            obj_ids.append(oid)
    max_frames = inp.attrs.get("max_frame_num_to_track")
    order = processing_order(t_count, int(inp.attrs["start_frame_idx"]),
                             None if max_frames is None else int(max_frames),
                             bool(inp.attrs["reverse"]))
    expect(order, "propagation covers no frame")
    out = f["outputs/frames"]
    expect(sorted(out.keys(), key=int) == sorted(str(t) for t in order),
           f"outputs/frames {sorted(out.keys(), key=int)} != processed frames {order}")
    for t in order:
        g = out[str(t)]
        expect(sorted(g.keys(), key=int) == sorted(str(o) for o in obj_ids),
               f"outputs/frames/{t}: objects {list(g.keys())} != {obj_ids}")
        for o in obj_ids:
            d = g[str(o)]["mask_logits"]
            expect(d.dtype == np.float32 and d.shape == (h, w), f"frames/{t}/{o}/mask_logits")
    if "prompts" in f["outputs"]:  # samc extension: add_new_* return values
        for k in keys:
            d = f["outputs/prompts"][k]["mask_logits"]
            expect(d.ndim == 3 and d.shape[1:] == (h, w), f"outputs/prompts/{k}")
    return fr[:], prompts, obj_ids, order


def check_video_trace(f, cfg):
    tr = f["trace"]
    names = sorted(tr.keys())
    expect(names == [f"{i:06d}" for i in range(len(names))], "trace numbering has gaps")
    counts, recs = {}, []
    for n in names:
        g = tr[n]
        mod, cls = str_attr(g, "module"), str_attr(g, "class")
        call = int(g.attrs["call"])
        expect(call == counts.get(mod, 0), f"{n} {mod}: call {call}, expected {counts.get(mod, 0)}")
        counts[mod] = call + 1
        expect("in" in g and "out" in g, f"{n}: in/out groups")
        expect("frame_idx" in g.attrs, f"{n} {mod}: no frame_idx")
        t = int(g.attrs["frame_idx"])
        oid = int(g.attrs["obj_id"]) if "obj_id" in g.attrs else None
        if mod.startswith(IMAGE_LEVEL):
            expect(oid is None, f"{n} {mod}: image-level call with obj_id")
        elif mod in PER_OBJECT or mod.startswith(PER_OBJECT_CHILDREN):
            expect(oid is not None, f"{n} {mod}: per-object call without obj_id")
        recs.append((mod, t, oid, g))
    return recs


def check_video_file(path):
    with h5py.File(path, "r") as f:
        cfg = check_root_model_weights(f)
        expect(cfg["_target_"].endswith("SAM2VideoPredictor"), "model target")
        missing = [k for k in VIDEO_PREDICTOR_OPTIONS if k not in cfg]
        expect(not missing, f"config_json lacks predictor options {missing}")
        if cfg["fill_hole_area"] > 0:
            expect("note_fill_hole_area" in f["model"].attrs,
                   "fill_hole_area > 0 needs /model note_fill_hole_area (how the fill ran)")
        s = int(cfg["image_size"])
        frames, prompts, obj_ids, order = check_video_inputs(f, s)
        t_count, h, w = frames.shape[:3]
        recs = check_video_trace(f, cfg)
        by = {}
        for r in recs:
            by.setdefault(r[0], []).append(r)

        # @preprocess: first, one per frame in order, == the numpy reference
        pre = by.get("@preprocess", [])
        expect([r[1] for r in pre] == list(range(t_count)), "@preprocess frames")
        expect([r[0] for r in recs[:t_count]] == ["@preprocess"] * t_count,
               "@preprocess records come first")
        pre_err, pre_out = 0.0, []
        for t, r in enumerate(pre):
            g = r[3]
            expect(np.array_equal(g["in/0"][:], frames[t]), f"@preprocess {t}: in/0 != frame")
            x = g["out/0"][:]
            expect(x.shape == (1, 3, s, s) and x.dtype == np.float32, "@preprocess out/0")
            pre_err = max(pre_err, float(np.abs(x - reference_video_preprocess(frames[t], s)).max()))
            pre_out.append(x)
        expect(pre_err == 0.0, f"@preprocess vs numpy PIL-bicubic reference: {pre_err}")

        # image encoder: input is the frame's @preprocess output; repeats identical
        first_enc = {}
        for _, t, _, g in by.get("image_encoder", []):
            expect(np.array_equal(g["in/0"][:], pre_out[t]), f"image_encoder frame {t}: input")
            if t in first_enc:
                for k in ("vision_features", "backbone_fpn.0", "vision_pos_enc.0"):
                    expect(np.array_equal(g["out/" + k][:], first_enc[t]["out/" + k][:]),
                           f"image_encoder frame {t}: repeat differs in {k}")
            else:
                first_enc[t] = g

        # prompts: one SAM-heads call each, in order, before propagation
        pe, dec = by.get("sam_prompt_encoder", []), by.get("sam_mask_decoder", [])
        expect(len(pe) >= len(prompts) and len(dec) >= len(prompts), "prompt calls missing")
        acc = {}
        for k, p in enumerate(prompts):
            _, t, oid, g = pe[k]
            expect((t, oid) == (p["frame"], p["obj"]), f"prompt {k}: prompt encoder at {(t, oid)}")
            pts, lab = g["in/points.0"][:], g["in/points.1"][:]
            mm = int(dec[k][3]["in"].attrs["multimask_output"])
            if p["mask"] is not None:
                acc.pop((t, oid), None)
                expect(lab.tolist() == [[-1]] and "masks" in g["in"], f"prompt {k}: mask path")
                expect(mm == 0, f"prompt {k}: multimask")
                continue
            new_c = [p["box"].reshape(2, 2)] if p["box"] is not None else []
            new_l = [np.array([2, 3], np.int32)] if p["box"] is not None else []
            new_c.append(p["coords"])
            new_l.append(p["labels"])
            old_c, old_l = acc.get((t, oid), ([], [])) if not p["clear"] else ([], [])
            c = np.concatenate(old_c + new_c).astype(np.float32)
            lab_exp = np.concatenate(old_l + new_l)
            acc[(t, oid)] = ([c], [lab_exp])
            want = c / np.array([w, h], np.float32) * np.float32(s)
            expect(pts.shape == (1,) + want.shape and np.allclose(pts[0], want, rtol=1e-6, atol=1e-4),
                   f"prompt {k}: prompt-encoder points")
            expect(np.array_equal(lab[0], lab_exp), f"prompt {k}: labels")
            expect(mm == int(len(lab_exp) <= 1), f"prompt {k}: multimask {mm}")

        # memory encoder: one preflight call per prompted (frame, object), one
        # per tracked (frame, object); memory attention on tracked ones only
        cond = {(p["frame"], p["obj"]) for p in prompts}
        mem = [(t, o) for _, t, o, _ in by.get("memory_encoder", [])]
        att = [(t, o) for _, t, o, _ in by.get("memory_attention", [])]
        tracked = [(t, o) for t in order for o in obj_ids if (t, o) not in cond]
        expect(sorted(mem) == sorted(list(cond) + tracked), f"memory_encoder calls {mem}")
        expect(sorted(att) == sorted(tracked), f"memory_attention calls {att}")
        for _, t, o, g in by.get("@prepare_memory_conditioned_features", []):
            expect(int(g["in"].attrs["frame_idx"]) == t, "@prepare frame_idx")
            expect(bool(g["in"].attrs["is_init_cond_frame"]) == ((t, o) not in tracked),
                   f"@prepare_memory_conditioned_features {(t, o)}: is_init_cond_frame")

        # bf16 memory upcast (sam2 issue 308): exactly the memory_attention calls
        # without object-pointer tokens on a bfloat16 bank carry samc_note, as do
        # their layer records and the enclosing @prepare record
        marked = []
        for mod, t, o, g in recs:
            note = str_attr(g, "samc_note") if "samc_note" in g.attrs else None
            if mod == "memory_attention":
                no_ptr = int(g["in"].attrs["num_obj_ptr_tokens"]) == 0
                expect((note is not None) == no_ptr,
                       f"memory_attention {(t, o)}: samc_note iff no pointer tokens")
                if note is not None:
                    expect(note.startswith("bf16_memory_upcast"), f"samc_note {note!r}")
                    marked.append((t, o))
            elif mod.startswith("memory_attention.layers.") or \
                    mod == "@prepare_memory_conditioned_features":
                pass
            else:
                expect(note is None, f"{mod} {(t, o)}: unexpected samc_note")
        for mod in ["@prepare_memory_conditioned_features"] + \
                [m for m in by if m.startswith("memory_attention.layers.")]:
            got = [(t, o) for m_, t, o, g in by.get(mod, []) if "samc_note" in g.attrs]
            expect(got == marked, f"{mod}: samc_note on {got}, memory_attention on {marked}")
        listed = json.loads(str_attr(f["model"], "note_bf16_memory_upcast")) \
            if "note_bf16_memory_upcast" in f["model"].attrs else []
        expect([(d["frame_idx"], d["obj_id"]) for d in listed] == marked,
               "/model note_bf16_memory_upcast")

        # @postprocess: one per propagated frame, == outputs
        post = by.get("@postprocess", [])
        expect([r[1] for r in post] == order, f"@postprocess frames {[r[1] for r in post]}")
        non_overlap = bool(cfg["non_overlap_masks"])
        post_err = 0.0
        for _, t, _, g in post:
            x, y = g["in/0"][:], g["out/0"][:]
            expect(x.shape == (len(obj_ids), 1, s // 4, s // 4), f"@postprocess {t}: in/0 {x.shape}")
            expect(y.shape == (len(obj_ids), 1, h, w), f"@postprocess {t}: out/0 {y.shape}")
            for i, o in enumerate(obj_ids):
                expect(np.array_equal(y[i, 0], f[f"outputs/frames/{t}/{o}/mask_logits"][:]),
                       f"@postprocess {t}: out/0[{i}] != outputs")
            if not non_overlap:
                my = plain_bilinear_matrix(s // 4, h, np.float32(s // 4) / np.float32(h))
                mx = plain_bilinear_matrix(s // 4, w, np.float32(s // 4) / np.float32(w))
                ref = np.matmul(np.matmul(my, x.astype(np.float64)), mx.T)
                post_err = max(post_err, float(np.abs(ref - y).max() / max(np.abs(y).max(), 1)))
        expect(post_err < 1e-5, f"@postprocess vs numpy bilinear: {post_err}")
        post_msg = "n/a (non_overlap_masks)" if non_overlap else f"{post_err:.1e}"
        return (f"{len(recs)} trace records, {t_count} frames, {len(prompts)} prompts, "
                f"frames {order}, {len(marked)} bf16 upcasts, preprocess exact, "
                f"postprocess vs numpy {post_msg}")


def main():
    bad = 0
    for path in sys.argv[1:]:
        try:
            with h5py.File(path, "r") as f:
                task = f["inputs"].attrs.get("task")
            if task == "video":
                print(f"OK   {path}: {check_video_file(path)}")
                continue
            if task in ("sam3_image", "sam3_video", "sam3_inst"):
                import check_dump as imported   # check_sam3* raise that module's Failed
                from check_sam3 import check_sam3_file
                from check_sam3_video import check_file as check_sam3_video_file
                check = check_sam3_file if task == "sam3_image" else check_sam3_video_file
                try:
                    print(f"OK   {path}: {check(path)}")
                except imported.Failed as e:
                    raise Failed(str(e))
                continue
            n, err = check_file(path)
            print(f"OK   {path}: {n} trace records, preprocess vs numpy {err:.2e}")
        except Failed as e:
            bad += 1
            print(f"FAIL {path}: {e}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
