# SPDX-License-Identifier: Apache-2.0
"""The configuration a sam3_video / sam3_inst dump records (docs/parity.md,
"SAM 3 video"): the builder's _target_ tree with the constructor defaults of
the video loop and the tracker filled in, and the constants written inline
in the official code (checked against its source, so that a change upstream
is noticed instead of silently recorded wrong).
"""

import importlib
import inspect
import json

ROOT_TARGET = "sam3.model.sam3_video_inference.Sam3VideoInferenceWithInstanceInteractivity"
TRACKER_TARGET = "sam3.model.sam3_tracking_predictor.Sam3TrackerPredictor"
INST_TARGET = "sam3.model.sam1_task_predictor.SAM3InteractiveImagePredictor"

# (key, value, module, qualified function, literal that must appear in its source)
CODE_CONSTANTS = [
    ("assoc_high_conf_thresh", 0.8, "sam3.model.sam3_video_base",
     "Sam3VideoBase._associate_det_trk", "HIGH_CONF_THRESH = 0.8"),
    ("assoc_high_iou_thresh", 0.8, "sam3.model.sam3_video_base",
     "Sam3VideoBase._associate_det_trk", "HIGH_IOU_THRESH = 0.8"),
    ("recondition_high_conf_thresh", 0.8, "sam3.model.sam3_video_base",
     "Sam3VideoBase._recondition_masklets", "HIGH_CONF_THRESH = 0.8"),
    ("occlusion_never_occluded", -1, "sam3.model.sam3_video_base",
     "Sam3VideoBase._suppress_overlapping_based_on_recent_occlusion", "NEVER_OCCLUDED = -1"),
    ("occlusion_always_occluded", 100000, "sam3.model.sam3_video_base",
     "Sam3VideoBase._suppress_overlapping_based_on_recent_occlusion", "ALWAYS_OCCLUDED = 100000"),
    ("occlusion_suppressed_logit", -10, "sam3.model.sam3_video_base",
     "Sam3VideoBase._suppress_overlapping_based_on_recent_occlusion", "NO_OBJ_LOGIT = -10"),
    ("removed_obj_score", -1e4, "sam3.model.sam3_video_base",
     "Sam3VideoBase.run_tracker_update_planning_phase", "= -1e4"),
    ("no_new_detections_prob_offset", 1e8, "sam3.model.sam3_video_base",
     "Sam3VideoBase.run_backbone_and_detection", "pred_probs - 1e8"),
    ("nms_suppressed_logit_offset", 1e4, "sam3.model.sam3_image",
     "Sam3ImageOnVideoMultiGPU._build_multigpu_buffer_next_chunk", "-= 1e4"),
    ("memory_object_score_present", 10.0, "sam3.model.sam3_video_base",
     "Sam3VideoBase._tracker_update_memories", "10.0, -10.0"),
    ("boundary_margin", 0.025, "sam3.model.sam3_video_base",
     "Sam3VideoBase._suppress_detections_close_to_boundary", "margin=0.025"),
    ("shrink_threshold", 0.3, "sam3.model.sam3_tracking_predictor",
     "Sam3TrackerPredictor._suppress_shrinked_masks", "shrink_threshold=0.3"),
    ("shrink_suppressed_logit", -10.0, "sam3.model.sam3_tracking_predictor",
     "Sam3TrackerPredictor._suppress_shrinked_masks", "max=-10.0"),
    ("object_wise_background", -10.0, "sam3.model.sam3_tracking_predictor",
     "Sam3TrackerPredictor._apply_object_wise_non_overlapping_constraints",
     "background_value=-10.0"),
    ("prev_mask_logit_clamp", 32.0, "sam3.model.sam3_tracking_predictor",
     "Sam3TrackerPredictor.add_new_points_or_box", "-32.0, 32.0"),
    ("no_obj_score", -1024.0, "sam3.model.sam3_tracker_base", None, "NO_OBJ_SCORE = -1024.0"),
    ("mask_as_output_scale", 20.0, "sam3.model.sam3_tracker_base",
     "Sam3TrackerBase._use_mask_as_output", "out_scale, out_bias = 20.0, -10.0"),
    ("non_overlap_clamp", -10.0, "sam3.model.sam3_tracker_base",
     "Sam3TrackerBase._apply_non_overlapping_constraints", "max=-10.0"),
    ("fill_hole_value", 0.1, "sam3.model.sam3_tracker_utils", "fill_holes_in_mask_scores",
     "torch.where(small_components_bg, 0.1, mask)"),
    ("fill_sprinkle_value", -0.1, "sam3.model.sam3_tracker_utils", "fill_holes_in_mask_scores",
     "torch.where(small_components_fg, -0.1, mask)"),
    ("refined_obj_score", 1.0, "sam3.model.sam3_video_inference",
     "Sam3VideoInferenceWithInstanceInteractivity.add_tracker_new_points",
     'tracker_metadata["obj_id_to_score"][obj_id] = 1.0'),
    ("inverse_sigmoid_eps", 1e-3, "sam3.model.model_misc", "inverse_sigmoid", "eps=1e-3"),
    ("joint_logit_clamp", 10.0, "sam3.model.sam3_image", "Sam3Image._update_scores_and_boxes",
     "clamp(min=-10.0, max=10.0)"),
]
# predict_inst (SAM3InteractiveImagePredictor / SAM2Transforms)
INST_CONSTANTS = [
    ("hole_fill_logit", 10.0, "sam3.model.utils.sam1_utils", "SAM2Transforms.postprocess_masks",
     "self.mask_threshold + 10.0"),
    ("low_res_logit_clamp", 32.0, "sam3.model.sam1_task_predictor",
     "SAM3InteractiveImagePredictor._predict", "-32.0, 32.0"),
]


def _source_of(module, qualname):
    mod = importlib.import_module(module)
    if qualname is None:
        return inspect.getsource(mod)
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return inspect.getsource(obj)


def code_constants(table=CODE_CONSTANTS):
    """{key: value} of the inline constants, each checked in the official
    source; a missing literal stops the tool."""
    out = {}
    for key, value, module, qualname, literal in table:
        src = _source_of(module, qualname)
        if literal not in src:
            raise SystemExit(f"code constant {key}: {literal!r} not found in {module}."
                             f"{qualname}: the official code changed; update sam3_video_config.py")
        out[key] = value
    return out


def _scalar(v):
    return v is None or isinstance(v, (bool, int, float, str)) or (
        isinstance(v, (tuple, list)) and all(_scalar(x) for x in v))


def constructor_defaults(target):
    """{name: default} of every scalar constructor parameter of the class and
    its bases (the parameters a **kwargs chain forwards to)."""
    module, _, name = target.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    out = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass) or klass.__module__.startswith("torch"):
            continue
        for p in inspect.signature(klass.__init__).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            if p.default is p.empty or not _scalar(p.default) or p.name in out:
                continue
            out[p.name] = list(p.default) if isinstance(p.default, tuple) else p.default
    return out


def fill_defaults(node, target):
    """Add the missing scalar constructor defaults to a _target_ node, after
    the builder's keys; returns the keys added."""
    if node.get("_target_") != target:
        raise SystemExit(f"expected a {target} node, got {node.get('_target_')}")
    added = []
    for k, v in constructor_defaults(target).items():
        if k not in node:
            node[k] = v
            added.append(k)
    return added


def fill_video_defaults(tree):
    """The video model: the loop's (root) and the tracker's defaults; the
    detector node stays as the builder passes it (as in sam3_image)."""
    return {"": fill_defaults(tree, ROOT_TARGET),
            "tracker": fill_defaults(tree["tracker"], TRACKER_TARGET)}


def dumps(obj):
    return json.dumps(obj)
