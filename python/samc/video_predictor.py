# SPDX-License-Identifier: Apache-2.0
"""SAM2VideoPredictor over samc_tracker (include/samc.h).

    predictor = samc.build_sam2_video_predictor("sam2.1_hiera_t", "sam2.1_hiera_tiny.pt")
    state = predictor.init_state("video_frames/")            # a directory of JPEG frames
    predictor.add_new_points_or_box(state, frame_idx=0, obj_id=1, points=[[210, 350]], labels=[1])
    for frame_idx, obj_ids, video_res_masks in predictor.propagate_in_video(state):
        ...                                                  # (num_obj, 1, H, W) float32 logits

Each inference state owns one samc_tracker, so several videos can be tracked
at once with one predictor (one thread per state at a time).
"""
import os
import warnings

import numpy as np

from . import _native, _options, arrays
from ._native import ffi, lib
from .model import Model, errors_unsupported


class InferenceState(dict):
    """What init_state returns: the official dict keys that describe the video
    ("num_frames", "video_height", "video_width", "obj_ids", "device") over
    the tracker that holds everything else."""

    def __init__(self, model, tracker, abort, num_frames, height, width):
        super().__init__(num_frames=num_frames, video_height=height, video_width=width, obj_ids=[], device="cpu")
        self._model = model  # outlives the tracker
        self._tracker = tracker
        self._abort = abort  # the tracker's abort state (samc._native)


class SAM2VideoPredictor:
    """sam2.sam2_video_predictor.SAM2VideoPredictor on a samc Model.

    Official arguments: fill_hole_area and non_overlap_masks (None: the
    config's, as the official builder passes them: fill_hole_area 8,
    non_overlap_masks false for the official configs). clear_non_cond_mem_around_input and
    add_all_frames_to_correct_as_cond are the config's (a .json config sets
    them). samc's, by keyword: impl, threads, overrides, progress
    (callable("propagate", done, total), once per propagated frame).
    """

    def __init__(self, model, fill_hole_area=None, non_overlap_masks=None, clear_non_cond_mem_around_input=None,
                 add_all_frames_to_correct_as_cond=None, *, impl=None, threads=0, overrides=None, progress=None,
                 **kwargs):
        if not isinstance(model, Model):
            raise _native.arg_error(f"model must be a samc.Model (samc.build_sam2(...)), got {type(model).__name__}")
        model.need("sam2", "SAM2VideoPredictor")
        for name, v in (("clear_non_cond_mem_around_input", clear_non_cond_mem_around_input),
                        ("add_all_frames_to_correct_as_cond", add_all_frames_to_correct_as_cond)):
            if v is not None:
                raise errors_unsupported(f"{name}: samc takes it from the model's config (a .json config with "
                                         f"`{name}` in its model section)")
        self.model = model
        self.fill_hole_area = fill_hole_area
        self.non_overlap_masks = non_overlap_masks
        self._impl = impl
        self._threads = _options.check_threads(threads)
        self._overrides = _options.overrides_list(overrides)
        self._progress = progress
        self.image_size = model.image_size

    @property
    def device(self):
        return "cpu"

    # ---- states -------------------------------------------------------------------

    def _new_tracker(self):
        params = ffi.new("samc_tracker_params *", lib.samc_tracker_default_params())
        impl = _native.text(self._impl)
        params.impl = impl
        params.n_threads = self._threads
        params.fill_hole_area = -1.0 if self.fill_hole_area is None else float(self.fill_hole_area)
        params.non_overlap_masks = -1 if self.non_overlap_masks is None else int(bool(self.non_overlap_masks))
        abort = _native.abort_args(params)  # progress: the generator reports it, per frame
        out = ffi.new("samc_tracker **")
        err = _native.new_error()
        _native.raise_for(lib.samc_tracker_new(self.model._ptr, params, out, err), err)
        tracker = ffi.gc(out[0], lib.samc_tracker_free)
        _options.apply_overrides(lib.samc_tracker_override, tracker, self._overrides)
        return tracker, abort

    def init_state(self, video_path, offload_video_to_cpu=False, offload_state_to_cpu=False,
                   async_loading_frames=False):
        """A new inference state on a directory of JPEG frames named by number
        (00000.jpg, ...), as the official loader reads, a video file (mp4,
        webm, mkv, mov, avi: frames as SAM 3's official OpenCV loader reads
        them, docs/video.md), or (samc) a (T, H, W, 3) uint8 array of frames.
        The offload and async options only place memory in the official code
        and are accepted as no-ops."""
        tracker, abort = self._new_tracker()
        err = _native.new_error()
        if isinstance(video_path, np.ndarray):
            video = arrays.frames(video_path)
            T, H, W = video.shape[:3]
            st = lib.samc_tracker_open_frames(tracker, _native.ptr(video, "uint8_t[]"), T, H, W, err)
            _native.raise_for(st, err)
        else:
            path = os.fspath(video_path)
            _native.raise_for(lib.samc_tracker_open_video(tracker, path.encode("utf-8"), err), err)
            info = ffi.new("samc_video_info *")
            _native.raise_for(lib.samc_tracker_video_info(tracker, info, err), err)
            T, H, W = info.frames, info.height, info.width
        return InferenceState(self.model, tracker, abort, T, H, W)

    def reset_state(self, inference_state):
        """Remove every prompt and object (the frames stay)."""
        err = _native.new_error()
        _native.raise_for(lib.samc_tracker_reset(inference_state._tracker, err), err)
        inference_state["obj_ids"].clear()

    # ---- prompts ---------------------------------------------------------------------

    def add_new_points_or_box(self, inference_state, frame_idx, obj_id, points=None, labels=None,
                              clear_old_points=True, normalize_coords=True, box=None):
        """Points ((N, 2) in video pixels, labels 1/0) and/or a box (x0, y0, x1,
        y1) for object obj_id on frame frame_idx (normalize_coords=False: in
        [0, 1] of the video width and height): (frame_idx, obj_ids,
        video_res_masks) with the masks of every object on that frame,
        (num_obj, 1, H, W) float32 logits."""
        if (points is not None) != (labels is not None):
            raise ValueError("points and labels must be provided together")
        if points is None and box is None:
            raise ValueError("at least one of points or box must be provided as input")
        pts = lab = bx = None
        n = 0
        if points is not None:
            pts = arrays.small(points, np.float32, "points")
            lab = arrays.small(labels, np.int32, "labels")
            if pts.ndim == 3 and pts.shape[0] == 1:
                pts = pts[0]
            if lab.ndim == 2 and lab.shape[0] == 1:
                lab = lab[0]
            if pts.ndim != 2 or pts.shape[1] != 2 or lab.shape != (pts.shape[0],):
                raise _native.arg_error(f"points must be (N, 2) with labels (N,), got {pts.shape} and {lab.shape}")
            n = pts.shape[0]
            if n == 0:  # (0, 2): no points, as the official zeros(0, 2)
                pts = lab = None
        if box is not None:
            bx = arrays.small(box, np.float32, "box").reshape(-1)
            if bx.shape != (4,):
                raise _native.arg_error(f"box must be x0, y0, x1, y1, got {bx.size} values")
            if not clear_old_points:
                raise ValueError("cannot add box without clearing old points, since box prompt must be provided "
                                 "before any point prompt (please use clear_old_points=True instead)")
        out = ffi.new("samc_frame_masks *")
        add = lib.samc_tracker_add_points if normalize_coords else lib.samc_tracker_add_points_normalized
        _native.call(add, inference_state._tracker, int(frame_idx), int(obj_id),
                     _native.ptr(pts, "float[]"), _native.ptr(lab, "int32_t[]"), n, _native.ptr(bx, "float[]"),
                     1 if clear_old_points else 0, out, abort=inference_state._abort)
        return self._frame_result(inference_state, out)

    add_new_points = add_new_points_or_box  # the official deprecated alias

    def add_new_mask(self, inference_state, frame_idx, obj_id, mask):
        """A mask (H, W) for object obj_id on frame frame_idx (nonzero: the
        object; any size, resized as the official code does)."""
        if hasattr(mask, "numpy") and not isinstance(mask, np.ndarray):
            mask = mask.detach().cpu().numpy()
        m = np.asarray(mask)
        if m.ndim != 2 or 0 in m.shape:
            raise _native.arg_error(f"mask must be a 2-D (H, W) array, got shape {m.shape}")
        if m.dtype != np.float32 or not m.flags.c_contiguous:  # bool/uint8 -> 0/1, as mask.float()
            m = np.ascontiguousarray(m, dtype=np.float32)
        out = ffi.new("samc_frame_masks *")
        _native.call(lib.samc_tracker_add_mask, inference_state._tracker, int(frame_idx), int(obj_id),
                     _native.ptr(m, "float[]"), m.shape[0], m.shape[1], out, abort=inference_state._abort)
        return self._frame_result(inference_state, out)

    def clear_all_prompts_in_frame(self, inference_state, frame_idx, obj_id, need_output=True):
        """Remove obj_id's prompts on frame_idx. samc returns no updated masks
        (need_output is accepted; the next add or propagate gives them)."""
        err = _native.new_error()
        st = lib.samc_tracker_clear_frame(inference_state._tracker, int(frame_idx), int(obj_id), err)
        _native.raise_for(st, err)

    def remove_object(self, inference_state, obj_id, strict=False, need_output=True):
        """Remove an object: (obj_ids, updated_frames). samc does not recompute
        the other objects' masks on the removed object's prompted frames, so
        updated_frames is empty (docs/python.md)."""
        if obj_id not in inference_state["obj_ids"]:
            if strict:
                raise RuntimeError(f"Cannot remove object id {obj_id} as it doesn't exist. All existing object "
                                   f"ids: {inference_state['obj_ids']}.")
            return inference_state["obj_ids"], []
        err = _native.new_error()
        _native.raise_for(lib.samc_tracker_remove_object(inference_state._tracker, int(obj_id), err), err)
        inference_state["obj_ids"].remove(obj_id)
        if need_output and self.non_overlap_masks:
            warnings.warn("remove_object: samc does not return the updated frames", stacklevel=2)
        return inference_state["obj_ids"], []

    # ---- tracking ---------------------------------------------------------------------

    def propagate_in_video(self, inference_state, start_frame_idx=None, max_frame_num_to_track=None,
                           reverse=False):
        """A generator of (frame_idx, obj_ids, video_res_masks) in tracking
        order, as the official one: each frame is computed (the GIL released)
        when the loop asks for it, so prompts may be added between frames and
        leaving the loop or Ctrl-C stops at a frame boundary."""
        start = -1 if start_frame_idx is None else int(start_frame_idx)
        count = -1 if max_frame_num_to_track is None else int(max_frame_num_to_track)
        return self._propagate(inference_state, start, count, bool(reverse))

    def propagate_in_video_preflight(self, inference_state):
        """Nothing to do ahead: samc's propagate consolidates the prompts itself."""

    def _propagate(self, state, start, count, reverse):
        """One samc_tracker_propagate per frame (bit-equal to one call over
        the range: the tests check it). The first call finds the start (the
        first prompted frame when start < 0); reverse tracking never starts
        at frame 0, so the last two frames of a reverse run to 0 go together."""
        T = state["num_frames"]
        total = None
        f, step = start, 0
        while True:
            pair = reverse and step > 0 and f == 1 and end == 0
            frames = self._propagate_call(state, f, 1 if pair else 0, reverse)
            if not frames:
                return  # reverse from frame 0: nothing to track
            if total is None:
                first = frames[0][0]
                span = T if count < 0 else count
                end = max(first - span, 0) if reverse else min(first + span, T - 1)
                total = abs(end - first) + 1
            for item in frames:
                step += 1
                if self._progress is not None:
                    self._progress("propagate", step, total)
                yield item
            f = frames[-1][0]
            if f == end:
                return
            f += -1 if reverse else 1

    def _propagate_call(self, state, start, count, reverse):
        frames = []
        _native.call(lib.samc_tracker_propagate, state._tracker, start, count, 1 if reverse else 0,
                     lib.samc_py_frame, ffi.NULL, abort=state._abort,
                     on_frame=lambda m: frames.append(self._frame_result(state, m)))
        return frames

    # ---- results -----------------------------------------------------------------------

    def _frame_result(self, state, m):
        """(frame_idx, obj_ids, (num_obj, 1, H, W) logits): a copy, since the
        tracker reuses its buffers for the next frame."""
        ids = [int(m.obj_ids[i]) for i in range(m.n_obj)]
        for i in ids:
            if i not in state["obj_ids"]:
                state["obj_ids"].append(i)
        masks = _native.copy_out(m.logits, (m.n_obj, 1, m.height, m.width))
        return int(m.frame_idx), ids, arrays.tensor(masks)


