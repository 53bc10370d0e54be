#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check SAM 3 video dumps (task "sam3_video", tools/dump_sam3_video.py) and
predict_inst dumps (task "sam3_inst", tools/dump_sam3_inst.py) against
docs/parity.md, with numpy (and Pillow for the frame resize) only:

  layout    root / model attrs (config_json a _target_ tree rooted at the
            video model or the image model with its interactive predictor,
            every loop threshold and tracker default present, the code
            constants), /weights in the released sam3.pt key layout,
            /notes, /inputs, /outputs shapes and dtypes;
  trace     numbering, per-module call counts, the scope attributes
            (frame_idx on every record; obj_ids on tracker calls and never
            on detector calls; obj_id iff one object), samc_note exactly on
            the records enclosing a bf16 upcast listed in /notes;
  numbers   (sam3_video) @preprocess == Pillow bilinear resize, /255, float16
            normalisation, and the input of that frame's first patch_embed;
            the tracker features bf16-representable (conv_s0/s1 inputs,
            @tracker_backbone level 2, stored memories); @nms == a greedy NMS
            of its IoUs; @detections == the threshold applied to its logits;
            @associate == numpy IoUs and the official matching rules;
            @hotstart keep-alive arithmetic; @occlusion == the
            most-recently-occluded rule; @suppress_shrinkage == numpy
            pixel-wise non-overlap and the 0.3 area ratio; @fill_holes ==
            numpy 8-connected components and the fill / sprinkle rules;
            @postprocess == the hiding, box and non-overlap rules, and
            /outputs == the @postprocess records in order.
            (sam3_inst) decoder outputs == /outputs (clamped low-res logits,
            IoUs), @postprocess == numpy hole fill (area <= max_hole_area,
            8-connected) + bilinear resize, prompt encoder points == the
            prompts scaled to the model (box corners first, labels 2 / 3).
Usage: /usr/bin/python3 tools/check_sam3_video.py FILE.h5 [...]
(tools/check_dump.py dispatches these tasks here.)
"""

import collections
import gzip
import json
import sys

import h5py
import numpy as np

from check_dump import Failed, expect, plain_bilinear_matrix, str_attr

ROOT = "sam3.model.sam3_video_inference.Sam3VideoInferenceWithInstanceInteractivity"
TRACKER = "sam3.model.sam3_tracking_predictor.Sam3TrackerPredictor"
IMAGE = "sam3.model.sam3_image.Sam3Image"
INST = "sam3.model.sam1_task_predictor.SAM3InteractiveImagePredictor"
LOOP_KEYS = ("score_threshold_detection", "det_nms_thresh", "assoc_iou_thresh",
             "trk_assoc_iou_thresh", "new_det_thresh", "hotstart_delay",
             "hotstart_unmatch_thresh", "hotstart_dup_thresh",
             "suppress_unmatched_only_within_hotstart", "init_trk_keep_alive",
             "max_trk_keep_alive", "min_trk_keep_alive",
             "suppress_overlapping_based_on_recent_occlusion_threshold", "fill_hole_area",
             "max_num_objects", "recondition_every_nth_frame", "image_size",
             "refinement_detector_cond_frame_removal_window", "use_prev_mem_frame")
TRACKER_KEYS = ("image_size", "num_maskmem", "max_cond_frames_in_attn", "max_obj_ptrs_in_encoder",
                "memory_temporal_stride_for_eval", "use_memory_selection", "mf_threshold",
                "multimask_output_in_sam", "multimask_min_pt_num", "multimask_max_pt_num",
                "multimask_output_for_tracking", "clear_non_cond_mem_around_input",
                "fill_hole_area", "non_overlap_masks_for_output", "max_point_num_in_prompt_enc",
                "sam_mask_decoder_extra_args")


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------

class Rec:
    def __init__(self, name, g):
        self.name = name
        self.module = str_attr(g, "module")
        self.call = int(g.attrs["call"])
        self.cls = str_attr(g, "class")
        self.attrs = {k: g.attrs[k] for k in g.attrs}
        self.g = g

    def i(self, slot):
        return self.g["in"][slot][()] if slot in self.g["in"] else self.g["in"].attrs[slot]

    def o(self, slot):
        return self.g["out"][slot][()] if slot in self.g["out"] else self.g["out"].attrs[slot]

    def has_o(self, slot):
        return slot in self.g["out"] or slot in self.g["out"].attrs

    @property
    def frame(self):
        return int(self.attrs["frame_idx"]) if "frame_idx" in self.attrs else None


def read_trace(f):
    t = f["trace"]
    names = sorted(t)
    expect(names == [f"{i:06d}" for i in range(len(names))], "trace names not 000000.. without gaps")
    recs = [Rec(n, t[n]) for n in names]
    calls = collections.Counter()
    for r in recs:
        expect(r.call == calls[r.module], f"{r.name} {r.module}: call {r.call}, expected {calls[r.module]}")
        calls[r.module] += 1
    return recs


def pairs(a):
    a = np.asarray(a)
    return {int(k): v for k, v in a.reshape(-1, 2)} if a.size else {}


def bf16_exact(x):
    b = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return bool(np.all((b & 0xFFFF) == 0))


def check_common(f, task):
    expect(str_attr(f, "format") == "samc-parity-dump", "root format")
    expect(int(f.attrs["format_version"]) == 1, "format_version")
    m = f["model"]
    expect(str_attr(m, "family") == "sam3", "family")
    for a in ("variant", "source", "torch_version", "config_json", "code_constants_json"):
        str_attr(m, a)
    int(m.attrs["seed"])
    if task == "sam3_video":   # sam3_inst never tokenizes and carries no vocabulary
        gz = m["bpe_vocab_gz"][()]
        expect(gz.dtype == np.uint8 and len(gzip.decompress(gz.tobytes()).splitlines()) >= 48895,
               "bpe_vocab_gz")
    for k, d in f["weights"].items():
        expect(k.startswith("detector.") or k.startswith("tracker."),
               f"/weights/{k}: not in the released detector.* / tracker.* layout")
        expect(d.dtype == np.float32, f"/weights/{k}: dtype {d.dtype}")
        if d.attrs.get("torch_dtype") is not None:
            expect(str_attr(d, "torch_dtype") == "complex64" and d.shape[-1] == 2, f"/weights/{k}")
    expect(str_attr(f["inputs"], "task") == task, "task")
    n = f["notes"]
    for a in ("device_moves", "dtype_upcasts"):
        json.loads(str_attr(n, a))
    return json.loads(str_attr(m, "config_json")), json.loads(str_attr(m, "code_constants_json"))


# --------------------------------------------------------------------------
# numpy re-statements of the official rules
# --------------------------------------------------------------------------

def components(mask):
    """8-connected components of a 2-D bool array: (labels, areas per pixel)."""
    h, w = mask.shape
    labels = np.zeros((h, w), np.int64)
    areas = np.zeros((h, w), np.int64)
    n = 0
    for y in range(h):
        for x in range(w):
            if not mask[y, x] or labels[y, x]:
                continue
            n += 1
            stack, members = [(y, x)], []
            labels[y, x] = n
            while stack:
                cy, cx = stack.pop()
                members.append((cy, cx))
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        ny, nx = cy + dy, cx + dx
                        if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and not labels[ny, nx]:
                            labels[ny, nx] = n
                            stack.append((ny, nx))
            ys, xs = zip(*members)
            areas[list(ys), list(xs)] = len(members)
    return labels, areas


def fill_holes(mask, max_area, fill, sprinkles):
    """sam3_tracker_utils.fill_holes_in_mask_scores on [B, 1, H, W]."""
    out = mask.astype(np.float32).copy()
    for b in range(out.shape[0]):
        m = out[b, 0]
        if fill:
            bg = m <= 0
            _, a = components(bg)
            m = np.where(bg & (a <= max_area), np.float32(0.1), m)
        if sprinkles:
            fg = m > 0
            thr = min(int(fg.sum()) // 2, max_area)
            _, a = components(fg)
            m = np.where(fg & (a <= thr), np.float32(-0.1), m)
        out[b, 0] = m
    return out


def mask_iou(a, b):
    a = a.reshape(a.shape[0], -1).astype(bool)
    b = b.reshape(b.shape[0], -1).astype(bool)
    inter = (a[:, None] & b[None]).sum(-1).astype(np.float32)
    union = (a[:, None] | b[None]).sum(-1).astype(np.float32)
    return inter / np.maximum(union, 1)


def resize_bilinear(x, h, w):
    """F.interpolate(bilinear, align_corners=False) of [..., H0, W0]."""
    h0, w0 = x.shape[-2:]
    if (h0, w0) == (h, w):
        return x.astype(np.float64)
    mh = plain_bilinear_matrix(h0, h, h0 / h)
    mw = plain_bilinear_matrix(w0, w, w0 / w)
    return np.einsum("ij,...jk,lk->...il", mh, x.astype(np.float64), mw)


# --------------------------------------------------------------------------
# sam3_video
# --------------------------------------------------------------------------

def check_video_model(cfg, consts):
    expect(cfg.get("_target_") == ROOT, "config_json root _target_")
    for k in LOOP_KEYS:
        expect(k in cfg, f"config_json: loop option {k} missing")
    expect(cfg["tracker"].get("_target_") == TRACKER, "config_json tracker _target_")
    for k in TRACKER_KEYS:
        expect(k in cfg["tracker"], f"config_json: tracker option {k} missing")
    r = cfg["image_size"]
    expect(r == cfg["tracker"]["image_size"] == cfg["detector"]["backbone"]["visual"]["trunk"]["img_size"],
           "image_size of loop, tracker and detector differ")
    for k in ("assoc_high_conf_thresh", "assoc_high_iou_thresh", "recondition_high_conf_thresh",
              "shrink_threshold", "no_obj_score"):
        expect(k in consts, f"code constant {k} missing")
    return r


def check_video_io(f, r):
    gi = f["inputs"]
    frames = gi["frames_u8"][()]
    expect(frames.dtype == np.uint8 and frames.ndim == 4 and frames.shape[3] == 3, "frames_u8")
    reqs = gi["requests"]
    expect(sorted(reqs, key=int) == [str(k) for k in range(len(reqs))], "requests numbering")
    out = f["outputs"]["requests"]
    expect(len(out) == len(reqs), "/outputs/requests: one group per request")
    t, h, w = frames.shape[:3]
    yields = []
    for k in range(len(reqs)):
        q, o = reqs[str(k)], out[str(k)]
        kind = str_attr(q, "type")
        expect(kind in ("add_prompt", "propagate", "remove", "reset"), f"request {k} type {kind}")
        expect(str_attr(o, "type") == kind, f"/outputs/requests/{k} type")
        if kind == "add_prompt":
            fi = int(q.attrs["frame_index"])
            expect(0 <= fi < t, f"request {k}: frame_index out of range")
            b = q["bounding_boxes"][()]
            expect(b.dtype == np.float32 and b.shape[1:] == (4,), f"request {k} boxes")
            expect(q["bounding_box_labels"].shape == (b.shape[0],), f"request {k} box labels")
            pts = q["points"][()]
            expect(pts.shape[1:] == (2,) and q["point_labels"].shape == (pts.shape[0],),
                   f"request {k} points")
            expect(pts.shape[0] == 0 or "obj_id" in q.attrs, f"request {k}: points need obj_id")
            yields.append((k, fi, o))
        elif kind == "propagate":
            expect(str_attr(q, "propagation_direction") in ("both", "forward", "backward"),
                   f"request {k} direction")
            ys = o["yields"]
            for i in range(len(ys)):
                yields.append((k, int(ys[str(i)].attrs["frame_index"]), ys[str(i)]))
    for k, fi, g in yields:
        ids = g["out_obj_ids"][()]
        n = len(ids)
        expect(ids.dtype == np.int64 and list(ids) == sorted(ids), f"request {k} frame {fi}: ids")
        expect(g["out_probs"].shape == (n,) and g["out_probs"].dtype == np.float32, "out_probs")
        expect(g["out_boxes_xywh"].shape == (n, 4), "out_boxes_xywh")
        m = g["out_binary_masks"][()]
        expect(m.dtype == np.int32 and m.shape == (n, h, w) and set(np.unique(m)) <= {0, 1},
               f"request {k} frame {fi}: out_binary_masks")
    return frames, yields


def check_scopes(recs, notes):
    ups = json.loads(str_attr(notes, "dtype_upcasts"))
    n_up = sum(len(v["calls"]) for v in ups.values())
    for r in recs:
        expect(r.frame is not None, f"{r.name} {r.module}: frame_idx missing")
        ids = r.attrs.get("obj_ids")
        tracker_call = r.module.startswith("tracker.") and not r.module.endswith(("conv_s0", "conv_s1"))
        if tracker_call or r.module in ("@track_step", "@encode_new_memory", "@use_mask_as_output",
                                        "@prepare_memory_conditioned_features", "@consolidate",
                                        "@frame_filter"):
            expect(ids is not None and len(ids) > 0, f"{r.name} {r.module}: obj_ids missing")
        if not r.module.startswith(("tracker.", "@")):
            expect(ids is None, f"{r.name} {r.module}: a detector record with obj_ids")
        if ids is not None:
            expect(("obj_id" in r.attrs) == (len(ids) == 1), f"{r.name}: obj_id iff one object")
        if r.module.endswith(("conv_s0", "conv_s1")):
            expect("samc_note" in r.attrs, f"{r.name} {r.module}: bf16 input without samc_note")
    noted = sum(1 for r in recs if "samc_note" in r.attrs)
    expect((noted > 0) == (n_up > 0), f"samc_note on {noted} records, {n_up} upcasts in /notes")


def check_preprocess(recs, frames, r):
    from PIL import Image
    pre = [x for x in recs if x.module == "@preprocess"]
    expect(len(pre) == len(frames), "one @preprocess per frame")
    first = {}
    for x in recs:
        if x.module == "backbone.vision_backbone.trunk.patch_embed" and x.frame not in first:
            first[x.frame] = x
    for t, p in enumerate(pre):
        expect(p.frame == t and np.array_equal(p.i("0"), frames[t]), f"@preprocess {t} in/0")
        img = np.asarray(Image.fromarray(frames[t]).resize((r, r), Image.BILINEAR))
        x = (img.astype(np.float32) / np.float32(255)).astype(np.float16).transpose(2, 0, 1)
        x = ((x - np.float16(0.5)) / np.float16(0.5)).astype(np.float16).astype(np.float32)
        expect(np.array_equal(p.o("0")[0], x), f"@preprocess {t}: != Pillow bilinear + float16 "
               f"normalisation (max diff {np.abs(p.o('0')[0] - x).max():.3g})")
        if t in first:
            expect(np.array_equal(first[t].i("0"), p.o("0")), f"frame {t}: patch_embed input")


def check_detection(recs):
    for x in recs:
        if x.module == "@nms":
            probs, masks = x.i("pred_probs"), x.i("pred_masks")
            valid = probs > np.float32(x.i("prob_threshold"))
            keep = x.o("0").astype(bool)
            if valid.any():
                ious = x.o("ious")
                expect(np.allclose(ious, mask_iou(masks[valid] > 0, masks[valid] > 0)),
                       f"{x.name} @nms ious")
                order, kept = list(np.argsort(-probs[valid], kind="stable")), []
                while order:
                    i = order.pop(0)
                    kept.append(i)
                    order = [j for j in order if ious[i, j] <= x.i("iou_threshold")]
                want = np.zeros_like(valid)
                want[np.nonzero(valid)[0][kept]] = True
                expect(np.array_equal(keep, want), f"{x.name} @nms keep != greedy NMS")
            else:
                expect(not keep.any(), f"{x.name} @nms keeps without candidates")
        elif x.module == "@detections":
            logits = x.i("pred_logits")[..., 0].astype(np.float32)
            with np.errstate(over="ignore"):
                probs = (np.float32(1) / (np.float32(1) + np.exp(-logits))).astype(np.float32)
            thr = np.float32(x.i("score_threshold_detection"))   # torch compares in float32
            sel = probs > thr if int(x.i("allow_new_detections")) else np.zeros_like(probs, bool)
            expect(len(x.o("scores")) == int(sel.sum()), f"{x.name} @detections: count")
            expect(np.allclose(x.o("scores"), probs[sel], atol=1e-6), f"{x.name} scores")
            expect(np.array_equal(x.o("mask"), x.i("pred_masks")[sel]), f"{x.name} masks")
            expect(np.array_equal(x.o("bbox"), x.i("pred_boxes_xyxy")[sel]), f"{x.name} boxes")
        elif x.module in ("tracker.sam_mask_decoder.conv_s0", "tracker.sam_mask_decoder.conv_s1"):
            expect(bf16_exact(x.i("0")), f"{x.name} {x.module}: input not bf16-rounded")
        elif x.module == "@tracker_backbone":
            expect(bf16_exact(x.o("backbone_fpn.2")), f"{x.name}: level 2 not bf16-rounded")


def check_association(recs, cfg, consts):
    hc, hi = consts["assoc_high_conf_thresh"], consts["assoc_high_iou_thresh"]
    for x in recs:
        if x.module != "@associate" or not x.has_o("ious"):
            continue
        dm, tm = x.o("det_masks_binary").astype(bool), x.o("trk_masks_binary").astype(bool)
        ious = x.o("ious")
        expect(np.allclose(ious, mask_iou(dm, tm)), f"{x.name} @associate ious")
        scores, ids = x.i("det_scores"), x.i("trk_obj_ids")
        new = (scores >= np.float32(cfg["new_det_thresh"])) & ~(ious >= cfg["assoc_iou_thresh"]).any(1)
        expect(np.array_equal(np.nonzero(new)[0], x.o("new_det_fa_inds")), f"{x.name} new dets")
        nonempty = tm.reshape(tm.shape[0], -1).any(1)
        matched = (ious >= cfg["trk_assoc_iou_thresh"]).any(0)
        expect(np.array_equal(ids[nonempty & ~matched], x.o("unmatched_trk_obj_ids")),
               f"{x.name} unmatched tracks")
        expect(np.array_equal(ids[~nonempty], x.o("empty_trk_obj_ids")), f"{x.name} empty tracks")
        for d in range(len(scores)):
            slot = f"det_to_matched_trk_obj_ids.{d}"
            expect(np.array_equal(ids[ious[d] >= cfg["assoc_iou_thresh"]], x.o(slot)), f"{x.name} {slot}")
        want = {}
        for d in range(len(scores)):
            if scores[d] >= hc and not new[d] and ious[d].max() >= hi:
                want[int(ids[int(np.argmax(ious[d]))])] = d
        expect(pairs(x.o("trk_id_to_max_iou_high_conf_det")) == want, f"{x.name} high-conf pairs")


def check_hotstart(recs, cfg):
    for x in recs:
        if x.module != "@hotstart":
            continue
        before = pairs(x.i("state.trk_keep_alive"))
        after = pairs(x.o("state.trk_keep_alive"))
        want = dict(before)
        for oid in x.i("new_det_obj_ids"):
            want[int(oid)] = cfg["init_trk_keep_alive"]
        matched = set()
        for k in x.g["in"]:
            if k.startswith("det_to_matched_trk_obj_ids"):
                matched |= set(int(i) for i in x.g["in"][k][()])
        for oid in matched:
            want[oid] = min(cfg["max_trk_keep_alive"], want.get(oid, 0) + 1)
        for oid in x.i("unmatched_trk_obj_ids"):
            want[int(oid)] = max(cfg["min_trk_keep_alive"], want.get(int(oid), 0) - 1)
        if cfg["decrease_trk_keep_alive_for_empty_masklets"]:
            for oid in x.i("empty_trk_obj_ids"):
                want[int(oid)] = max(cfg["min_trk_keep_alive"], want.get(int(oid), 0) - 1)
        expect(after == want, f"{x.name} @hotstart keep-alive {after} != {want}")


def check_suppression(recs, cfg, consts):
    thr = cfg["suppress_overlapping_based_on_recent_occlusion_threshold"]
    for x in recs:
        if x.module == "@occlusion":
            m = x.i("binary_masks").astype(bool)
            last = x.i("last_occluded").astype(np.int64)
            n = len(last)
            want = np.zeros(n, bool)
            if n > 1:
                ious = mask_iou(m, m)
                expect(np.allclose(ious, x.o("ious")), f"{x.name} @occlusion ious")
                gt = (lambda a, b: a > b) if not int(x.i("reverse")) else (lambda a, b: a < b)
                for i in range(n):
                    for j in range(i + 1, n):
                        if ious[i, j] >= thr:
                            if gt(last[i], last[j]) and last[j] > -1:
                                want[i] = True
                            if gt(last[j], last[i]) and last[i] > -1:
                                want[j] = True
            expect(np.array_equal(want, x.o("0").astype(bool)), f"{x.name} @occlusion to_suppress")
        elif x.module == "@suppress_shrinkage":
            p = x.i("0")[:, 0]
            keep_obj = np.argmax(p, axis=0)
            nonover = np.where(np.arange(len(p))[:, None, None] == keep_obj[None], p,
                               np.minimum(p, -10.0)) if len(p) > 1 else p
            before = np.maximum((p > 0).sum((-1, -2)), 1)
            ratio = (nonover > 0).sum((-1, -2)) / before
            keep = ratio >= consts["shrink_threshold"]
            want = np.where(keep[:, None, None], p, np.minimum(p, -10.0))
            expect(np.array_equal(want.astype(np.float32), x.o("0")[:, 0]), f"{x.name} @suppress_shrinkage")
        elif x.module == "@fill_holes":
            want = fill_holes(x.i("0"), int(x.i("max_area")), int(x.i("fill_holes")),
                              int(x.i("remove_sprinkles")))
            expect(np.array_equal(want, x.o("0")), f"{x.name} @fill_holes != numpy fill")


def check_postprocess(recs, yields):
    posts = [x for x in recs if x.module == "@postprocess"]
    expect(len(posts) == len(yields), f"{len(posts)} @postprocess records, {len(yields)} outputs")
    for x, (k, fi, g) in zip(posts, yields):
        expect(x.frame == fi, f"{x.name}: frame {x.frame}, output frame {fi}")
        for s in ("out_obj_ids", "out_probs", "out_boxes_xywh", "out_binary_masks"):
            expect(np.array_equal(x.o(s), g[s][()]), f"{x.name} {s} != /outputs request {k}")
        ins = x.g["in"]
        masks = {int(s.split(".")[1]): ins[s][()] for s in ins if s.startswith("obj_id_to_mask.")}
        hidden = set()
        for key in ("removed_obj_ids", "suppressed_obj_ids", "unconfirmed_obj_ids"):
            if key in ins:
                hidden |= set(int(i) for i in ins[key][()])
        want = [o for o in sorted(masks) if masks[o].any() and o not in hidden]
        ids = list(x.o("out_obj_ids"))
        expect(ids == want, f"{x.name}: output ids {ids}, expected {want}")
        out = x.o("out_binary_masks").astype(bool)
        h, w = out.shape[1:] if len(out) else (1, 1)
        scores = ins.attrs
        for n, o in enumerate(ids):
            expect(np.float32(scores[f"obj_id_to_score.{o}"]) == x.o("out_probs")[n], f"{x.name} prob")
            m = masks[o][0].astype(bool)
            expect(not (out[n] & ~m).any(), f"{x.name}: output mask of {o} outside its mask")
            ys, xs = np.nonzero(m)
            box = np.array([xs.min() / w, ys.min() / h, (xs.max() - xs.min()) / w,
                            (ys.max() - ys.min()) / h], np.float32)
            expect(np.allclose(box, x.o("out_boxes_xywh")[n], atol=1e-6), f"{x.name} box of {o}")
        if len(ids) > 1:
            expect(out.sum(0).max() <= 1, f"{x.name}: output masks overlap")


def check_memory_bf16(recs):
    for x in recs:
        if x.module == "@prepare_memory_conditioned_features":
            for s in x.g["in"]:
                if s.endswith(".maskmem_features"):
                    expect(bf16_exact(x.g["in"][s][()]), f"{x.name} {s}: stored memory not bf16")


def check_video(f):
    cfg, consts = check_common(f, "sam3_video")
    r = check_video_model(cfg, consts)
    frames, yields = check_video_io(f, r)
    recs = read_trace(f)
    check_scopes(recs, f["notes"])
    check_preprocess(recs, frames, r)
    check_detection(recs)
    check_association(recs, cfg, consts)
    check_hotstart(recs, cfg)
    check_suppression(recs, cfg, consts)
    check_postprocess(recs, yields)
    check_memory_bf16(recs)
    mods = collections.Counter(x.module for x in recs)
    return (f"{len(recs)} records, {len(frames)} frames, {len(yields)} outputs, "
            f"{mods['@associate']} associations, {mods['@fill_holes']} hole fills checked")


# --------------------------------------------------------------------------
# sam3_inst
# --------------------------------------------------------------------------

def check_inst(f):
    cfg, consts = check_common(f, "sam3_inst")
    expect(cfg.get("_target_") == IMAGE, "config_json root _target_")
    inst = cfg["inst_interactive_predictor"]
    expect(inst.get("_target_") == INST and inst["sam_model"].get("_target_") == TRACKER,
           "config_json inst_interactive_predictor")
    r = cfg["backbone"]["visual"]["trunk"]["img_size"]
    img = f["inputs"]["image_u8"][()]
    h, w = img.shape[:2]
    recs = read_trace(f)
    dec = [x for x in recs if x.module == "tracker.sam_mask_decoder"]
    pe = [x for x in recs if x.module == "tracker.sam_prompt_encoder"]
    post = [x for x in recs if x.module == "@postprocess"]
    prompts = f["inputs"]["prompts"]
    n = len(prompts)
    expect(len(dec) == len(pe) == len(post) == n, "one prompt encoder, decoder, @postprocess per prompt")
    hole = inst["max_hole_area"]
    for k in range(n):
        p, o = prompts[str(k)], f["outputs"][str(k)]
        low = dec[k].o("0")
        expect(np.array_equal(np.clip(low[0], -32, 32), o["low_res_masks"][()]), f"prompt {k} low_res_masks")
        expect(np.array_equal(dec[k].o("1")[0], o["iou_predictions"][()]), f"prompt {k} iou_predictions")
        expect(np.array_equal(post[k].i("0"), low), f"prompt {k} @postprocess in/0")
        expect(np.array_equal(post[k].o("0")[0], o["masks"][()]), f"prompt {k} masks")
        filled = low.astype(np.float32).copy()
        for c in range(filled.shape[1]):
            lab, area = components(filled[0, c] <= 0)
            filled[0, c] = np.where((lab > 0) & (area <= hole), np.float32(10.0), filled[0, c])
        want = resize_bilinear(filled, h, w)
        got = post[k].o("0")
        err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-12)
        expect(err < 1e-5, f"prompt {k} @postprocess != numpy fill + resize (rel {err:.2e})")
        pts = p["point_coords"][()] / np.array([w, h], np.float32) * r
        labels = p["point_labels"][()]
        if "box" in p:
            b = p["box"][()].reshape(2, 2) / np.array([w, h], np.float32) * r
            pts, labels = np.concatenate([b, pts]), np.concatenate([[2, 3], labels])
        got_pts = pe[k].i("points.0")[0]
        expect(np.allclose(got_pts, pts, atol=1e-4) and np.array_equal(pe[k].i("points.1")[0], labels),
               f"prompt {k}: prompt encoder points")
        expect(("mask_input" in p) == ("masks" in pe[k].g["in"]), f"prompt {k}: mask input")
    return f"{len(recs)} records, {n} prompts"


def check_file(path):
    with h5py.File(path, "r") as f:
        task = str_attr(f["inputs"], "task")
        if task == "sam3_video":
            return check_video(f)
        if task == "sam3_inst":
            return check_inst(f)
        raise Failed(f"task {task}: not a SAM 3 video / predict_inst dump")


def main():
    ok = True
    for path in sys.argv[1:]:
        try:
            print(f"OK   {path}: {check_file(path)}")
        except Failed as e:
            ok = False
            print(f"FAIL {path}: {e}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
