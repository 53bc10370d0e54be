# SPDX-License-Identifier: Apache-2.0
"""The function records of the official SAM 3 video loop (task sam3_video,
docs/parity.md lists every record and its slots; docs/sam3_video.md says
what each step computes).  LoopRecorder wraps the methods of one
Sam3VideoInferenceWithInstanceInteractivity instance (and a few module
functions of sam3), records what they receive and return, computes the
decision margins and counts the paths taken.  It changes nothing they
compute: each wrapper calls the original with the original arguments and
returns its result.  Tensors are converted when the call happens (inputs
before, outputs after), so later in-place edits do not leak into records.
"""

import functools
import inspect

import numpy as np
import torch

from parity_trace import NONE, to_array
from sam3_video_margins import rel_min_abs
from sam3_video_trace import BOOL, _ids, _pairs, scoped_generator, snapshot_hotstart, state_obj_ids

HIGH_CONF_ASSOC = 0.8    # _associate_det_trk HIGH_CONF_THRESH / HIGH_IOU_THRESH
HIGH_CONF_RECOND = 0.8   # _recondition_masklets HIGH_CONF_THRESH
SHRINK_THRESHOLD = 0.3   # _suppress_shrinked_masks default


def bind(real, args, kwargs):
    """{parameter: value} of a call, defaults applied."""
    ba = inspect.signature(real).bind(*args, **kwargs)
    ba.apply_defaults()
    return dict(ba.arguments)


def capture_mask_iou(vb, store):
    """Replace sam3_video_base.mask_iou by a wrapper appending (a, b, ious) of
    each call to store; returns the original (the caller restores it)."""
    real = vb.mask_iou

    def mask_iou(a, b):
        out = real(a, b)
        store.append((a, b, out))
        return out

    vb.mask_iou = mask_iou
    return real


def arr(x, dtype=None):
    a = to_array(x, BOOL)
    return a.astype(dtype) if dtype is not None else a


class LoopRecorder:
    def __init__(self, model, tracer, margins, counters):
        self.m, self.t = model, model.tracker
        self.tracer, self.margins, self.counters = tracer, margins, counters
        self.frames_u8, self.frame_files = [], []
        self.pending_post = []          # @postprocess records waiting for their frame
        self.upcasts = []               # (site, frame_idx, obj_ids)
        self.propagation_types = []
        self.score_ranges = []          # (frame, max probability, kept) of each detection
        self._captured = {}

    # ------------------------------------------------------------------
    def install(self):
        self._wrap_loading()
        self._wrap_detection()
        self._wrap_tracker_propagation()
        self._wrap_tracker_internals()
        self._wrap_planning()
        self._wrap_execution_and_outputs()
        self._wrap_interaction()

    def _rec(self, name, cls, inputs, outputs, **attrs):
        """A function record from dicts / lists of (slot, value)."""
        fl = self.tracer.flat
        ins = fl(inputs) if isinstance(inputs, dict) else inputs
        outs = fl(outputs) if isinstance(outputs, dict) else outputs
        return self.tracer.add(name, cls, ins, outs, **attrs)

    def where(self):
        t, o = self.tracer.current("frame_idx"), self.tracer.current("obj_ids")
        return f"frame {t}" + ("" if not o else f", objs {list(o)}")

    def on_upcast(self, site, reason):
        self.upcasts.append((site, self.tracer.current("frame_idx"), self.tracer.current("obj_ids")))
        self.counters.add(f"bf16_upcast {site}", example=self.where())
        self.tracer.note_open(f"bf16_upcast: {site} (/notes@dtype_upcasts)")

    # ------------------------------------------------------------------
    # frames: @preprocess
    # ------------------------------------------------------------------
    def _wrap_loading(self):
        """The official folder loader decodes each frame (_load_img_as_tensor:
        PIL RGB, TF.resize to R x R, to_tensor), stores the stack in float16
        and normalises it in float16.  @preprocess, one per frame when
        init_state returns: in/0 the decoded uint8 frame, out/0 the frame as
        the detector backbone receives it (float16 value as float32,
        [1, 3, R, R])."""
        import sam3.model.io_utils as io
        from PIL import Image
        rec = self

        real_one = io._load_img_as_tensor

        def load_one(img_path, image_size):
            rec.frame_files.append(img_path)
            rec.frames_u8.append(np.array(Image.open(img_path).convert("RGB")))
            return real_one(img_path, image_size)

        io._load_img_as_tensor = load_one
        real_init = self.m.init_state

        def init_state(*args, **kwargs):
            state = real_init(*args, **kwargs)
            imgs = state["input_batch"].img_batch
            if len(rec.frames_u8) != len(imgs):
                raise SystemExit("frames were not loaded through the traced folder loader")
            for t, u8 in enumerate(rec.frames_u8):
                with rec.tracer.context(frame_idx=t, obj_ids=None):
                    rec._rec("@preprocess", "function", [("0", u8)],
                             [("0", arr(imgs[t].float()[None]))])
            return state

        self.m.init_state = init_state

    # ------------------------------------------------------------------
    # detector: @nms, @detections, @tracker_backbone
    # ------------------------------------------------------------------
    def _wrap_detection(self):
        """detection(: _wrap_detector_scope, _wrap_nms, _wrap_detections, _wrap_neck_margins."""
        self._wrap_detector_scope()
        self._wrap_nms()
        self._wrap_detections()
        self._wrap_neck_margins()

    def _wrap_detector_scope(self):
        """detector calls carry the frame whose image they process"""
        m, rec = self.m, self
        det = m.detector
        real_chunk = det._build_multigpu_buffer_next_chunk

        def build_chunk(*args, **kwargs):
            a = bind(real_chunk, args, kwargs)
            frame = min(a["frame_idx_begin"] + det.rank, a["frame_idx_end"] - 1)
            with rec.tracer.context(frame_idx=frame, obj_ids=None):
                return real_chunk(*args, **kwargs)

        det._build_multigpu_buffer_next_chunk = build_chunk

    def _wrap_nms(self):
        """@nms: the mask NMS of the detector's candidates"""
        rec = self
        import sam3.model.sam3_image as si
        import sam3.perflib.nms as pnms
        real_nms = si.nms_masks

        def nms_masks(pred_probs, pred_masks, prob_threshold, iou_threshold):
            captured = []
            real_iou = pnms.mask_iou

            def mask_iou(a, b):
                out = real_iou(a, b)
                captured.append(out)
                return out

            pnms.mask_iou = mask_iou
            try:
                keep = real_nms(pred_probs, pred_masks, prob_threshold, iou_threshold)
            finally:
                pnms.mask_iou = real_iou
            valid = pred_probs > prob_threshold
            ious = captured[0] if captured else torch.zeros(0, 0)
            rec._rec("@nms", "function",
                     {"pred_probs": arr(pred_probs), "pred_masks": arr(pred_masks),
                      "prob_threshold": float(prob_threshold), "iou_threshold": float(iou_threshold)},
                     {"0": arr(keep), "ious": arr(ious)})
            w = f"@nms {rec.where()}"
            rec.margins.add_all("det_score", pred_probs.numpy(), prob_threshold, w)
            if ious.numel():
                iu = np.triu_indices(ious.shape[0], 1)
                rec.margins.add_all("nms_iou", ious.numpy()[iu], iou_threshold, w)
                rec.margins.add("det_binarise", rel_min_abs(pred_masks[valid].numpy()), w)
            rec.counters.add("nms candidates (score > threshold)", int(valid.sum()))
            rec.counters.add("nms suppressed", int(valid.sum() - keep.sum()), example=rec.where())
            return keep

        si.nms_masks = nms_masks

    def _wrap_detections(self):
        """@detections and @tracker_backbone"""
        m, rec, det = self.m, self, self.m.detector
        real_fvg = det.forward_video_grounding_multigpu

        def fvg(*args, **kwargs):
            out, backbone_out = real_fvg(*args, **kwargs)
            rec._captured["grounding"] = {k: out[k].clone() for k in
                                          ("pred_logits", "pred_boxes_xyxy", "pred_masks")}
            return out, backbone_out

        det.forward_video_grounding_multigpu = fvg
        real_rbd = m.run_backbone_and_detection

        def run_backbone_and_detection(*args, **kwargs):
            a = bind(real_rbd, args, kwargs)
            frame = a["frame_idx"]
            with rec.tracer.context(frame_idx=frame, obj_ids=None):
                det_out = real_rbd(*args, **kwargs)
                g = rec._captured.pop("grounding")
                allow = bool(a["allow_new_detections"])
                rec._rec("@detections", "Sam3VideoBase",
                         {"pred_logits": arr(g["pred_logits"]),
                          "pred_boxes_xyxy": arr(g["pred_boxes_xyxy"]),
                          "pred_masks": arr(g["pred_masks"]),
                          "score_threshold_detection": float(m.score_threshold_detection),
                          "allow_new_detections": allow},
                         {"bbox": arr(det_out["bbox"]), "mask": arr(det_out["mask"]),
                          "scores": arr(det_out["scores"])})
                probs = g["pred_logits"].squeeze(-1).sigmoid()
                rec.score_ranges.append((frame, float(probs.max()), len(det_out["scores"])))
                if allow:
                    rec.margins.add_all("det_score", probs.numpy(), m.score_threshold_detection,
                                        f"@detections {rec.where()}")
                rec.counters.add("detections kept", len(det_out["scores"]))
                if not allow:
                    rec.counters.add("frames without new detections allowed", example=frame)
                tb = a["feature_cache"][frame][1]["tracker_backbone_out"]
                rec._rec("@tracker_backbone", "Sam3VideoBase", {},
                         {"backbone_fpn": [arr(x) for x in tb["backbone_fpn"]],
                          "vision_pos_enc": [arr(x) for x in tb["vision_pos_enc"]]})
            return det_out

        m.run_backbone_and_detection = run_backbone_and_detection

    def _wrap_neck_margins(self):
        """bf16 rounding margins of the tracker neck levels"""
        rec, det = self, self.m.detector
        neck = det.backbone.vision_backbone
        real_neck = neck.forward

        def neck_forward(*args, **kwargs):
            out = real_neck(*args, **kwargs)
            sam2_out = out[2]
            if sam2_out is not None:   # the levels the tracker keeps are rounded to bf16
                keep = len(sam2_out) - det.backbone.scalp
                for i, x in enumerate(sam2_out[:keep]):
                    rec.margins.add_bf16("bf16_feature", x.detach().numpy(),
                                         f"{rec.where()} tracker neck level {i}")
            return out

        neck.forward = neck_forward

    # ------------------------------------------------------------------
    # tracker propagation: @propagate_tracker, @fill_holes
    # ------------------------------------------------------------------
    def _wrap_tracker_propagation(self):
        m, t, rec = self.m, self.t, self
        real_prop = m._propogate_tracker_one_frame_local_gpu

        def propagate_local(*args, **kwargs):
            a = bind(real_prop, args, kwargs)
            with rec.tracer.context(frame_idx=a["frame_idx"], obj_ids=None):
                ids, masks, scores = real_prop(*args, **kwargs)
                rec._rec("@propagate_tracker", "Sam3VideoBase",
                         {"reverse": bool(a["reverse"]), "run_mem_encoder": bool(a["run_mem_encoder"])},
                         {"obj_ids": _ids(ids), "low_res_masks": arr(masks),
                          "obj_scores": arr(scores)})
                for i, s in zip(ids, scores.reshape(-1).tolist()):
                    rec.margins.add("object_score", abs(s), f"{rec.where()} obj {i} (tracker)")
                rec.counters.add("tracker propagations (object-frames)", len(ids))
            return ids, masks, scores

        m._propogate_tracker_one_frame_local_gpu = propagate_local

        def tracker_scope(*args, **kwargs):
            a = bind(real_tprop, args, kwargs)
            return {"frame_idx": a["start_frame_idx"], "obj_ids": state_obj_ids(a["inference_state"])}

        real_tprop = t.propagate_in_video
        t.propagate_in_video = scoped_generator(self.tracer, real_tprop, tracker_scope)

        import sam3.model.sam3_video_base as vb
        import sam3.model.sam3_video_inference as vi
        for mod in (vb, vi):
            real_fill = mod.fill_holes_in_mask_scores

            def fill(mask, max_area, fill_holes=True, remove_sprinkles=True, _real=real_fill):
                out = _real(mask, max_area, fill_holes=fill_holes, remove_sprinkles=remove_sprinkles)
                if max_area > 0:
                    rec._rec("@fill_holes", "function",
                             {"0": arr(mask), "max_area": int(max_area),
                              "fill_holes": bool(fill_holes), "remove_sprinkles": bool(remove_sprinkles)},
                             {"0": arr(out)})
                    changed = int((out != mask).sum())
                    rec.counters.add("hole fill: logits changed", changed, example=rec.where() if changed else None)
                    if mask.numel():
                                rec.margins.add("fill_binarise", rel_min_abs(mask.numpy()), f"@fill_holes {rec.where()}")
                return out

            mod.fill_holes_in_mask_scores = fill

    # ------------------------------------------------------------------
    # tracker internals: @track_step, @prepare_memory_conditioned_features,
    # @frame_filter, @encode_new_memory, @use_mask_as_output, @consolidate
    # ------------------------------------------------------------------
    def _wrap_tracker_internals(self):
        """tracker internals(: _wrap_track_step, _wrap_frame_filter, _wrap_encode_memory, _wrap_mask_as_output, _wrap_decoder_margins, _wrap_consolidate, _wrap_tracker_scopes."""
        self._wrap_track_step()
        self._wrap_frame_filter()
        self._wrap_encode_memory()
        self._wrap_mask_as_output()
        self._wrap_decoder_margins()
        self._wrap_consolidate()
        self._wrap_tracker_scopes()

    def _wrap_track_step(self):
        """@track_step and @prepare_memory_conditioned_features"""
        t, tracer = self.t, self.tracer
        real_step = t.track_step

        def track_step(*args, **kwargs):
            a = bind(real_step, args, kwargs)
            pin = a["point_inputs"] or {}
            ins = {"frame_idx": int(a["frame_idx"]), "is_init_cond_frame": bool(a["is_init_cond_frame"]),
                   "num_frames": a["num_frames"], "track_in_reverse": bool(a["track_in_reverse"]),
                   "run_mem_encoder": bool(a["run_mem_encoder"]),
                   "use_prev_mem_frame": bool(a["use_prev_mem_frame"]),
                   "point_inputs": {k: arr(v) for k, v in pin.items()} or None,
                   "mask_inputs": None if a["mask_inputs"] is None else arr(a["mask_inputs"]),
                   "prev_sam_mask_logits": None if a["prev_sam_mask_logits"] is None
                   else arr(a["prev_sam_mask_logits"])}
            r = tracer._begin("@track_step", "Sam3TrackerBase", (), ins)
            out = real_step(*args, **kwargs)
            # pred_masks_high_res is pred_masks resized to R (bilinear): not repeated here
            keep = {k: v for k, v in out.items()
                    if k not in ("point_inputs", "mask_inputs", "pred_masks_high_res")}
            tracer._end(r, keep)
            return out

        t.track_step = track_step
        t._prepare_memory_conditioned_features = tracer.wrap_callable(
            t._prepare_memory_conditioned_features, "@prepare_memory_conditioned_features",
            "Sam3TrackerBase")

    def _wrap_frame_filter(self):
        """@frame_filter: memory selection"""
        t, rec = self.t, self
        real_filter = t.frame_filter

        def frame_filter(output_dict, track_in_reverse, frame_idx, num_frames, r):
            out = real_filter(output_dict, track_in_reverse, frame_idx, num_frames, r)
            cands = {k: float(v["eff_iou_score"]) for k, v in
                     output_dict["non_cond_frame_outputs"].items() if "eff_iou_score" in v}
            ins = {"track_in_reverse": bool(track_in_reverse), "frame_idx": int(frame_idx),
                   "num_frames": int(num_frames), "r": int(r),
                   "mf_threshold": float(t.mf_threshold),
                   "eff_iou_score": _pairs(cands).astype(np.float64)}
            rec._rec("@frame_filter", "Sam3TrackerBase", ins, {"0": _ids(out)})
            rec.margins.add_all("mem_select", list(cands.values()), t.mf_threshold,
                                f"@frame_filter {rec.where()}")
            low = [k for k, v in cands.items() if v <= t.mf_threshold]
            rec.counters.add("memory selection: frames below mf_threshold", len(low),
                             example=rec.where() if low else None)
            return out

        t.frame_filter = frame_filter

    def _wrap_encode_memory(self):
        """@encode_new_memory"""
        t, rec, tracer = self.t, self, self.tracer
        real_enc = t._encode_new_memory

        def encode_new_memory(*args, **kwargs):
            a = bind(real_enc, args, kwargs)
            ins = {"pred_masks_high_res": arr(a["pred_masks_high_res"]),
                   "object_score_logits": arr(a["object_score_logits"]),
                   "is_mask_from_pts": bool(a["is_mask_from_pts"])}
            r = tracer._begin("@encode_new_memory", "Sam3TrackerBase", (), ins)
            feats, pos = real_enc(*args, **kwargs)
            tracer._end(r, {"maskmem_features": feats, "maskmem_pos_enc": pos})
            w = f"@encode_new_memory {rec.where()}"
            if a["is_mask_from_pts"]:
                rec.margins.add("mem_binarise", rel_min_abs(a["pred_masks_high_res"].numpy()), w)
            rec.margins.add_bf16("bf16_memory", feats.float().numpy(), w)
            return feats, pos

        t._encode_new_memory = encode_new_memory

    def _wrap_mask_as_output(self):
        """@use_mask_as_output"""
        t, rec, tracer = self.t, self, self.tracer
        real_mask_out = t._use_mask_as_output

        def use_mask_as_output(backbone_features, high_res_features, mask_inputs):
            r = tracer._begin("@use_mask_as_output", "Sam3TrackerBase", (),
                              {"mask_inputs": arr(mask_inputs)})
            out = real_mask_out(backbone_features, high_res_features, mask_inputs)
            tracer._end(r, out)
            rec.counters.add("tracker mask inputs (add_new_mask)", 1, example=rec.where())
            return out

        t._use_mask_as_output = use_mask_as_output

    def _wrap_decoder_margins(self):
        """object score, multimask and stability margins of the tracker's SAM decoder"""
        t, rec = self.t, self
        dec = t.sam_mask_decoder
        real_stab = dec._dynamic_multimask_via_stability
        stab_seen = {}

        def stab(all_mask_logits, all_iou_scores):
            stab_seen["v"] = (dec._get_stability_scores(all_mask_logits[:, 0:1]), all_iou_scores)
            return real_stab(all_mask_logits, all_iou_scores)

        dec._dynamic_multimask_via_stability = stab
        real_dec = dec.forward

        def dec_forward(*args, **kwargs):
            stab_seen.clear()
            out = real_dec(*args, **kwargs)
            scores = out[3].reshape(-1).tolist()
            w = f"sam_mask_decoder {rec.where()}"
            for s in scores:
                rec.margins.add("object_score", abs(s), f"{w} (score {s:+.4f})")
            if kwargs.get("multimask_output"):
                for b, s in zip(out[1].numpy(), scores):
                    if s > 0:
                        iou = np.sort(b)[::-1]
                        rec.margins.add("iou_argmax", iou[0] - iou[1], w + " (multimask)")
            elif "v" in stab_seen:
                sc, ious = stab_seen["v"]
                for b, (v, s) in enumerate(zip(sc.reshape(-1).tolist(), scores)):
                    if s > 0:
                        rec.margins.add("stability", abs(v - dec.dynamic_multimask_stability_thresh),
                                        f"{w} (stability {v:.4f})")
                        if v < dec.dynamic_multimask_stability_thresh:
                            iou = np.sort(ious[b, 1:].numpy())[::-1]
                            rec.margins.add("iou_argmax", iou[0] - iou[1], w + " (stability fallback)")
            return out

        dec.forward = dec_forward

    def _wrap_consolidate(self):
        """@consolidate"""
        t, tracer = self.t, self.tracer
        real_cons = t._consolidate_temp_output_across_obj

        def consolidate(*args, **kwargs):
            a = bind(real_cons, args, kwargs)
            with tracer.context(frame_idx=a["frame_idx"], obj_ids=state_obj_ids(a["inference_state"])):
                r = tracer._begin("@consolidate", "Sam3TrackerPredictor", (),
                                  {"is_cond": bool(a["is_cond"]),
                                   "run_mem_encoder": bool(a["run_mem_encoder"]),
                                   "consolidate_at_video_res": bool(a["consolidate_at_video_res"])})
                out = real_cons(*args, **kwargs)
                tracer._end(r, out)
            return out

        t._consolidate_temp_output_across_obj = consolidate

    def _wrap_tracker_scopes(self):
        """scope (frame, objects) of the tracker's entry points"""
        t, tracer = self.t, self.tracer
        def scoped(name, scope):
            real = getattr(t, name)

            @functools.wraps(real)
            def wrapper(*args, **kwargs):
                with tracer.context(**scope(bind(real, args, kwargs))):
                    return real(*args, **kwargs)

            setattr(t, name, wrapper)

        scoped("add_new_mask", lambda a: {"frame_idx": a["frame_idx"], "obj_ids": [a["obj_id"]]})
        scoped("add_new_points_or_box",
               lambda a: {"frame_idx": a["frame_idx"], "obj_ids": [a["obj_id"]]})
        scoped("propagate_in_video_preflight",
               lambda a: {"obj_ids": state_obj_ids(a["inference_state"])})
        scoped("_run_memory_encoder",
               lambda a: {"frame_idx": a["frame_idx"],
                          "obj_ids": state_obj_ids(a["inference_state"])})

    # ------------------------------------------------------------------
    # planning: @associate, @drop_over_limit, @hotstart, @recondition,
    # @occlusion, @suppress_occlusion, @update_memories,
    # @suppress_shrinkage, @plan
    # ------------------------------------------------------------------
    def _wrap_planning(self):
        """planning(: _wrap_plan, _wrap_associate, _wrap_drop, _wrap_hotstart, _wrap_recondition, _wrap_occlusion, _wrap_memory_update."""
        self._wrap_plan()
        self._wrap_associate()
        self._wrap_drop()
        self._wrap_hotstart()
        self._wrap_recondition()
        self._wrap_occlusion()
        self._wrap_memory_update()

    def _wrap_plan(self):
        """@plan: the update plan and the new metadata"""
        m, rec = self.m, self
        real_plan = m.run_tracker_update_planning_phase

        def planning(*args, **kwargs):
            a = bind(real_plan, args, kwargs)
            with rec.tracer.context(frame_idx=a["frame_idx"], obj_ids=None):
                plan, meta = real_plan(*args, **kwargs)
                rec._rec("@plan", "Sam3VideoBase", {}, {
                    "new_det_fa_inds": _ids(plan["new_det_fa_inds"]),
                    "new_det_obj_ids": _ids(plan["new_det_obj_ids"]),
                    "unmatched_trk_obj_ids": _ids(plan["unmatched_trk_obj_ids"]),
                    "obj_ids_newly_removed": _ids(plan["obj_ids_newly_removed"]),
                    "num_obj_dropped_due_to_limit": int(plan["num_obj_dropped_due_to_limit"]),
                    "reconditioned_obj_ids": _ids(plan["reconditioned_obj_ids"]),
                    "obj_ids_all_gpu": _ids(meta["obj_ids_all_gpu"]),
                    "max_obj_id": int(meta["max_obj_id"]),
                    "obj_id_to_score": _pairs({int(k): float(v) for k, v in
                                               meta["obj_id_to_score"].items()}),
                    "obj_id_to_tracker_score": _pairs({int(k): float(v) for k, v in
                                                       meta["obj_id_to_tracker_score_frame_wise"]
                                                       [a["frame_idx"]].items()}),
                    "obj_id_to_last_occluded": _pairs({int(k): int(v.reshape(-1)[0]) for k, v in
                                                       meta["obj_id_to_last_occluded"].items()}),
                })
            return plan, meta

        m.run_tracker_update_planning_phase = planning

    def _wrap_associate(self):
        """@associate"""
        m, rec = self.m, self
        import sam3.model.sam3_video_base as vb
        real_assoc = m._associate_det_trk

        def associate(det_masks, det_scores_np, trk_masks, trk_obj_ids):
            store = []
            real_iou = capture_mask_iou(vb, store)
            try:
                out = real_assoc(det_masks=det_masks, det_scores_np=det_scores_np,
                                 trk_masks=trk_masks, trk_obj_ids=trk_obj_ids)
            finally:
                vb.mask_iou = real_iou
            new, unmatched, d2t, t2d, empty = out
            ins = {"det_masks": arr(det_masks), "det_scores": np.asarray(det_scores_np, np.float32),
                   "trk_masks": arr(trk_masks), "trk_obj_ids": _ids(trk_obj_ids),
                   "assoc_iou_thresh": float(m.assoc_iou_thresh),
                   "trk_assoc_iou_thresh": float(m.trk_assoc_iou_thresh),
                   "new_det_thresh": float(m.new_det_thresh),
                   "high_conf_thresh": HIGH_CONF_ASSOC, "high_iou_thresh": HIGH_CONF_ASSOC}
            outs = {"new_det_fa_inds": _ids(new), "unmatched_trk_obj_ids": _ids(unmatched),
                    "det_to_matched_trk_obj_ids": {int(k): _ids(v) for k, v in d2t.items()},
                    "trk_id_to_max_iou_high_conf_det": _pairs({int(k): int(v) for k, v in t2d.items()}),
                    "empty_trk_obj_ids": _ids(empty)}
            if store:
                dm, tm, ious = store[0]
                outs["ious"] = arr(ious)
                outs["det_masks_binary"] = arr(dm)
                outs["trk_masks_binary"] = arr(tm)
            rec._rec("@associate", "Sam3VideoBase", ins, outs)
            w = f"@associate {rec.where()}"
            rec.margins.add_all("new_det_score", det_scores_np, m.new_det_thresh, w)
            if store:
                iu = ious.numpy()
                rec.margins.add_all("assoc_iou", iu, m.assoc_iou_thresh, w)
                rec.margins.add_all("trk_assoc_iou", iu, m.trk_assoc_iou_thresh, w)
                matched = np.ones(len(det_scores_np), bool)
                matched[np.asarray(new, np.int64)] = False
                if matched.any():
                    rec.margins.add_all("high_conf_score", np.asarray(det_scores_np)[matched],
                                        HIGH_CONF_ASSOC, w)
                    rec.margins.add_all("high_iou", iu.max(axis=1)[matched], HIGH_CONF_ASSOC, w)
                rec.margins.add("det_binarise", rel_min_abs(det_masks.numpy()), w)
                rec.margins.add("trk_binarise", rel_min_abs(trk_masks.numpy()), w)
            c = rec.counters
            c.add("association: new detections", len(new), example=rec.where() if len(new) else None)
            c.add("association: det-track matches", sum(len(v) for v in d2t.values()))
            c.add("association: detections matching >= 2 tracks",
                  sum(len(v) >= 2 for v in d2t.values()), example=rec.where() if any(
                      len(v) >= 2 for v in d2t.values()) else None)
            c.add("association: unmatched tracks", len(unmatched),
                  example=rec.where() if len(unmatched) else None)
            c.add("association: empty tracks", len(empty), example=rec.where() if len(empty) else None)
            c.add("association: high-confidence det-track pairs", len(t2d),
                  example=rec.where() if len(t2d) else None)
            return out

        m._associate_det_trk = associate

    def _wrap_drop(self):
        """@drop_over_limit"""
        m, rec = self.m, self
        real_drop = m._drop_new_det_with_obj_limit

        def drop(new_det_fa_inds, det_scores_np, num_to_keep):
            out = real_drop(new_det_fa_inds, det_scores_np, num_to_keep)
            rec._rec("@drop_over_limit", "Sam3VideoBase",
                     {"new_det_fa_inds": _ids(new_det_fa_inds),
                      "det_scores": np.asarray(det_scores_np, np.float32),
                      "num_to_keep": int(num_to_keep), "max_num_objects": int(m.max_num_objects)},
                     {"0": _ids(out)})
            rec.counters.add("max_num_objects: new detections dropped",
                             len(new_det_fa_inds) - len(out), example=rec.where())
            return out

        m._drop_new_det_with_obj_limit = drop

    def _wrap_hotstart(self):
        """@hotstart"""
        m, rec = self.m, self
        real_hot = m._process_hotstart

        def hotstart(*args, **kwargs):
            a = bind(real_hot, args, kwargs)
            frame, reverse = a["frame_idx"], a["reverse"]
            before = snapshot_hotstart(a["rank0_metadata"], frame)
            suppressed_before = set(a["rank0_metadata"]["suppressed_obj_ids"].get(frame, set()))
            removed, meta = real_hot(*args, **kwargs)
            after = snapshot_hotstart(meta, frame)
            ins = {"new_det_obj_ids": _ids(a["new_det_obj_ids"]),
                   "det_to_matched_trk_obj_ids": {int(k): _ids(v) for k, v in
                                                  a["det_to_matched_trk_obj_ids"].items()},
                   "unmatched_trk_obj_ids": _ids(a["unmatched_trk_obj_ids"]),
                   "empty_trk_obj_ids": _ids(a["empty_trk_obj_ids"]),
                   "reverse": bool(reverse), "hotstart_delay": int(m.hotstart_delay),
                   "hotstart_unmatch_thresh": int(m.hotstart_unmatch_thresh),
                   "hotstart_dup_thresh": int(m.hotstart_dup_thresh),
                   "init_trk_keep_alive": int(m.init_trk_keep_alive),
                   "max_trk_keep_alive": int(m.max_trk_keep_alive),
                   "min_trk_keep_alive": int(m.min_trk_keep_alive), **{f"state.{k}": v for k, v in before.items()}}
            outs = {"obj_ids_newly_removed": _ids(removed), **{f"state.{k}": v for k, v in after.items()}}
            rec._rec("@hotstart", "Sam3VideoBase", ins, outs)
            rec._count_hotstart(frame, reverse, removed, meta, suppressed_before)
            return removed, meta

        m._process_hotstart = hotstart

    def _wrap_recondition(self):
        """@recondition"""
        m, t, rec = self.m, self.t, self
        real_recond = m._recondition_masklets

        def recondition(frame_idx, det_out, t2d, states, meta, scores):
            obj_ids = list(meta["obj_ids_all_gpu"])
            pairs = sorted((int(k), int(v)) for k, v in t2d.items())
            trk_scores = np.array([float(scores[obj_ids.index(k)]) for k, _ in pairs], np.float32)
            added = []
            real_add = t.add_new_mask

            def add_new_mask(*aa, **kk):
                added.append(int(bind(real_add, aa, kk)["obj_id"]))
                return real_add(*aa, **kk)

            t.add_new_mask = add_new_mask
            try:
                out = real_recond(frame_idx, det_out, t2d, states, meta, scores)
            finally:
                t.add_new_mask = real_add
            rec._rec("@recondition", "Sam3VideoBase",
                     {"pairs": np.array(pairs, np.int64).reshape(-1, 2), "obj_scores": trk_scores,
                      "high_conf_thresh": HIGH_CONF_RECOND,
                      "recondition_every_nth_frame": int(m.recondition_every_nth_frame)},
                     {"add_new_mask_obj_ids": _ids(added)})
            rec.margins.add_all("recondition_score", trk_scores, HIGH_CONF_RECOND,
                                f"@recondition {rec.where()}")
            rec.counters.add("reconditioning: add_new_mask from a detection", len(added),
                             example=rec.where() if added else None)
            rec.counters.add("reconditioning: frames considered", 1)
            return out

        m._recondition_masklets = recondition

    def _wrap_occlusion(self):
        """@suppress_occlusion and @occlusion"""
        m, rec = self.m, self
        import sam3.model.sam3_video_base as vb
        real_sup = m._suppress_overlapping_based_on_recent_occlusion

        def suppress_occlusion(frame_idx, masks, meta_prev, meta_new, removed, reverse=False):
            before = masks.clone()
            out = real_sup(frame_idx, masks, meta_prev, meta_new, removed, reverse)
            rec._rec("@suppress_occlusion", "Sam3VideoBase",
                     {"low_res_masks": arr(before), "obj_ids": _ids(meta_prev["obj_ids_all_gpu"]),
                      "obj_ids_newly_removed": _ids(removed), "reverse": bool(reverse)},
                     {"low_res_masks": arr(out),
                      "obj_id_to_last_occluded": _pairs({int(k): int(v.reshape(-1)[0]) for k, v in
                                                         meta_new["obj_id_to_last_occluded"].items()})})
            return out

        m._suppress_overlapping_based_on_recent_occlusion = suppress_occlusion

        real_occ = m._get_objects_to_suppress_based_on_most_recently_occluded

        def objects_to_suppress(binary, last_occluded, obj_ids, frame_idx=None, reverse=False):
            store = []
            real_iou = capture_mask_iou(vb, store)
            try:
                out = real_occ(binary, last_occluded, obj_ids, frame_idx, reverse)
            finally:
                vb.mask_iou = real_iou
            thr = m.suppress_overlapping_based_on_recent_occlusion_threshold
            outs = {"0": arr(out)}
            if store:
                outs["ious"] = arr(store[0][2])
                iu = store[0][2].numpy()
                rec.margins.add_all("occlusion_iou", iu[np.triu_indices(iu.shape[0], 1)], thr,
                                    f"@occlusion {rec.where()}")
            rec._rec("@occlusion", "Sam3VideoBase",
                     {"binary_masks": arr(binary), "last_occluded": arr(last_occluded),
                      "obj_ids": _ids(obj_ids), "threshold": float(thr), "reverse": bool(reverse)},
                     outs)
            n = int(out.sum())
            rec.counters.add("occlusion suppression: objects suppressed", n,
                             example=rec.where() if n else None)
            return out

        m._get_objects_to_suppress_based_on_most_recently_occluded = objects_to_suppress

    def _wrap_memory_update(self):
        """@update_memories and @suppress_shrinkage"""
        m, t, rec = self.m, self.t, self
        real_upd = m._tracker_update_memories

        def update_memories(*args, **kwargs):
            a = bind(real_upd, args, kwargs)
            rec._rec("@update_memories", "Sam3VideoBase",
                     {"low_res_masks": arr(a["low_res_masks"]),
                      "obj_ids": _ids(a["tracker_metadata"]["obj_ids_all_gpu"])}, {})
            return real_upd(*args, **kwargs)

        m._tracker_update_memories = update_memories

        real_shrink = t._suppress_object_pw_area_shrinkage

        def shrink(pred_masks):
            out = real_shrink(pred_masks)
            nonoverlap = t._apply_non_overlapping_constraints(pred_masks)   # margins only
            before = (pred_masks > 0).sum(dim=(-1, -2)).clamp(min=1).double()
            after = (nonoverlap > 0).sum(dim=(-1, -2)).double()
            ratio = (after / before).reshape(-1).numpy()
            rec._rec("@suppress_shrinkage", "Sam3TrackerPredictor",
                     {"0": arr(pred_masks), "shrink_threshold": SHRINK_THRESHOLD},
                     {"0": arr(out)})
            if pred_masks.shape[0] > 1:
                rec.margins.add_all("shrink_ratio", ratio, SHRINK_THRESHOLD,
                                    f"@suppress_shrinkage {rec.where()}")
            n = int((ratio < SHRINK_THRESHOLD).sum()) if pred_masks.shape[0] > 1 else 0
            rec.counters.add("memory update: masks suppressed by shrinkage", n,
                             example=rec.where() if n else None)
            return out

        t._suppress_object_pw_area_shrinkage = shrink

    def _count_hotstart(self, frame, reverse, removed, meta, suppressed_before):
        m, c = self.m, self.counters
        diff = frame - m.hotstart_delay if not reverse else frame + m.hotstart_delay
        first = meta["obj_first_frame_idx"]
        for oid in sorted(removed):
            unmatched = len(meta["unmatched_frame_inds"].get(oid, ())) >= m.hotstart_unmatch_thresh
            dup = any(b == oid and len(v) >= m.hotstart_dup_thresh
                      for (a_, b), v in meta["overlap_pair_to_frame_inds"].items())
            within = (first[oid] > diff) if not reverse else (first[oid] < diff)
            if within and unmatched:
                c.add("hotstart: removed (unmatched)", example=f"frame {frame}, obj {oid}")
            if within and dup:
                c.add("hotstart: removed (duplicate)", example=f"frame {frame}, obj {oid}")
        new_sup = set(meta["suppressed_obj_ids"].get(frame, set())) - suppressed_before
        c.add("hotstart: keep-alive suppressions", len(new_sup),
              example=f"frame {frame}, objs {sorted(new_sup)}" if new_sup else None)

    # ------------------------------------------------------------------
    # execution and outputs: @add_new_objects, @remove_objects,
    # @build_outputs, @postprocess
    # ------------------------------------------------------------------
    def _wrap_execution_and_outputs(self):
        """execution and outputs(: _wrap_execution, _wrap_outputs."""
        self._wrap_execution()
        self._wrap_outputs()

    def _wrap_execution(self):
        """@add_new_objects, @remove_objects"""
        m, rec = self.m, self
        real_exec = m.run_tracker_update_execution_phase

        def execution(*args, **kwargs):
            a = bind(real_exec, args, kwargs)
            with rec.tracer.context(frame_idx=a["frame_idx"], obj_ids=None):
                return real_exec(*args, **kwargs)

        m.run_tracker_update_execution_phase = execution

        real_add = m._tracker_add_new_objects

        def add_new_objects(*args, **kwargs):
            a = bind(real_add, args, kwargs)
            ids = _ids(a["new_obj_ids"])
            rec._rec("@add_new_objects", "Sam3VideoBase",
                     {"new_obj_ids": ids, "new_obj_masks": arr(a["new_obj_masks"])}, {})
            rec.counters.add("new objects added", len(ids), example=rec.where())
            if len(ids) > 1:
                rec.counters.add("tracker states born with >= 2 objects", example=rec.where())
            return real_add(*args, **kwargs)

        m._tracker_add_new_objects = add_new_objects

        real_rm = m._tracker_remove_objects

        def remove_objects(states, obj_ids):
            ids = _ids(obj_ids)
            rec._rec("@remove_objects", "Sam3VideoBase", {"obj_ids": ids}, {})
            rec.counters.add("objects removed from the tracker", len(ids), example=rec.where())
            return real_rm(states, obj_ids)

        m._tracker_remove_objects = remove_objects

    def _wrap_outputs(self):
        """@build_outputs, @postprocess"""
        m, rec = self.m, self
        real_build = m.build_outputs

        def build_outputs(*args, **kwargs):
            a = bind(real_build, args, kwargs)
            with rec.tracer.context(frame_idx=a["frame_idx"], obj_ids=None):
                out = real_build(*args, **kwargs)
                rec._rec("@build_outputs", "Sam3VideoBase",
                         {"reconditioned_obj_ids": _ids(a["reconditioned_obj_ids"] or ())},
                         {str(int(k)): arr(v) for k, v in out.items()})
            return out

        m.build_outputs = build_outputs

        real_post = m._postprocess_output

        def postprocess(*args, **kwargs):
            a = bind(real_post, args, kwargs)
            out_in = a["out"]
            ins = [(f"obj_id_to_mask.{int(k)}", arr(v)) for k, v in sorted(out_in["obj_id_to_mask"].items())]
            ins += [(f"obj_id_to_score.{int(k)}", np.float64(v)) for k, v in
                    sorted(out_in["obj_id_to_score"].items())]
            ins += [(f"obj_id_to_tracker_score.{int(k)}", np.float64(v)) for k, v in
                    sorted(out_in["obj_id_to_tracker_score"].items())]
            for key in ("removed_obj_ids", "suppressed_obj_ids", "unconfirmed_obj_ids"):
                v = a[key]
                ins.append((key, NONE if v is None else _ids(v)))
            res = real_post(*args, **kwargs)
            outs = [(k, arr(res[k])) for k in ("out_obj_ids", "out_probs", "out_boxes_xywh",
                                               "out_binary_masks")]
            with rec.tracer.context(frame_idx=None):
                r = rec.tracer.add("@postprocess", "Sam3VideoInference", ins, outs)
            rec.pending_post.append(r)
            if len(res["out_obj_ids"]) > 1:
                rec.counters.add("outputs: object-wise non-overlap over >= 2 masks")
            hidden = set(int(k) for k in out_in["obj_id_to_mask"]) - set(
                int(i) for i in res["out_obj_ids"])
            rec.counters.add("outputs: objects hidden (empty, removed or suppressed)", len(hidden))
            return res

        m._postprocess_output = postprocess

    def frame_of_post(self, frame_idx):
        """The @postprocess record(s) made since the last yield belong to
        frame_idx (the official generator yields right after them)."""
        if not self.pending_post:
            raise RuntimeError(f"frame {frame_idx}: no @postprocess record")
        for r in self.pending_post:
            r.attrs["frame_idx"] = int(frame_idx)
        self.pending_post = []

    # ------------------------------------------------------------------
    # interaction: points, action history, visual prompts
    # ------------------------------------------------------------------
    def _wrap_interaction(self):
        m, t, rec = self.m, self.t, self
        real_pts = m.add_tracker_new_points

        def add_points(*args, **kwargs):
            a = bind(real_pts, args, kwargs)
            meta = a["inference_state"]["tracker_metadata"]
            existing = bool(meta) and any(a["obj_id"] in ids for ids in meta["obj_ids_per_gpu"])
            rec.counters.add("points: refine an existing object" if existing else
                             "points: new object", example=f"frame {a['frame_idx']}, obj {a['obj_id']}")
            with rec.tracer.context(frame_idx=a["frame_idx"], obj_ids=[a["obj_id"]]):
                return real_pts(*args, **kwargs)

        m.add_tracker_new_points = add_points

        real_clear = m.clear_detector_added_cond_frame_in_tracker

        def clear(tracker_state, obj_id, refined_frame_idx):
            idx = t._obj_id_to_idx(tracker_state, obj_id)
            before = set(tracker_state["mask_inputs_per_obj"][idx])
            out = real_clear(tracker_state, obj_id, refined_frame_idx)
            cleared = sorted(before - set(tracker_state["mask_inputs_per_obj"][idx]))
            rec._rec("@clear_detector_cond_frames", "Sam3VideoInferenceWithInstanceInteractivity",
                     {"obj_id": int(obj_id), "refined_frame_idx": int(refined_frame_idx),
                      "window": int(m.refinement_detector_cond_frame_removal_window)},
                     {"cleared_frames": _ids(cleared)})
            rec.counters.add("points: detector conditioning frames cleared", len(cleared),
                             example=f"obj {obj_id}: {cleared}" if cleared else None)
            return out

        m.clear_detector_added_cond_frame_in_tracker = clear

        real_parse = m.parse_action_history_for_propagation

        def parse(inference_state):
            kind, ids = real_parse(inference_state)
            rec.propagation_types.append((kind, ids))
            rec.counters.add(f"propagate_in_video: {kind}", example=ids)
            return kind, ids

        m.parse_action_history_for_propagation = parse

        real_visual = m._get_visual_prompt

        def visual(inference_state, frame_idx, boxes_cxcywh, box_labels):
            out = real_visual(inference_state, frame_idx, boxes_cxcywh, box_labels)
            if out[2] is not None:
                rec.counters.add("box prompt: first box as the visual prompt", example=frame_idx)
            if len(out[0]):
                rec.counters.add("box prompt: boxes as geometric prompts", len(out[0]))
            return out

        m._get_visual_prompt = visual
