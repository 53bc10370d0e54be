# SPDX-License-Identifier: Apache-2.0
"""Sam3VideoPredictor over samc_sam3_tracker (include/samc_sam3.h): SAM 3's
concept tracking in a video, with the official predictor's calls
(sam3.model.sam3_video_predictor.Sam3VideoPredictor).

    model = samc.build_sam3_image_model(bpe_path="bpe_simple_vocab_16e6.txt.gz", checkpoint_path="sam3.pt")
    predictor = samc.Sam3VideoPredictor(model)
    sid = predictor.start_session("frames/")["session_id"]
    out = predictor.add_prompt(sid, frame_idx=0, text="a dog")
    for r in predictor.propagate_in_video(sid, "both", None, None):
        r["frame_index"], r["outputs"]["out_obj_ids"], r["outputs"]["out_binary_masks"]
    predictor.close_session(sid)

Each session owns one C tracker; the outputs are NumPy arrays (copies: the
tracker reuses its buffers): out_obj_ids (N,) int64, out_probs (N,) float32,
out_boxes_xywh (N, 4) float32 normalised by the frame size, out_binary_masks
(N, H, W) bool.
"""
import os
import queue
import threading
import uuid

import numpy as np

from . import _native, _options, arrays
from ._native import ffi, lib
from .model import Model, errors_unsupported

_DIRECTIONS = {"forward": lib.SAMC_SAM3_FORWARD, "backward": lib.SAMC_SAM3_BACKWARD, "both": lib.SAMC_SAM3_BOTH}


def _outputs(f):
    """The official per-frame outputs of one samc_sam3_frame (copied)."""
    n, h, w = f.n, f.h, f.w
    return {
        "out_obj_ids": _native.copy_out(f.obj_ids, (n,), np.int32).astype(np.int64),
        "out_probs": _native.copy_out(f.probs, (n,)),
        "out_boxes_xywh": _native.copy_out(f.boxes, (n, 4)),
        "out_binary_masks": _native.copy_out(f.masks, (n, h, w), np.uint8).astype(bool),
    }


class Sam3VideoPredictor:
    """sam3.model.sam3_video_predictor.Sam3VideoPredictor on a samc SAM 3
    Model loaded with its tracker half (sam3.pt holds both).

    Official calls: handle_request / handle_stream_request (the request
    dicts), start_session, add_prompt, propagate_in_video, remove_object,
    reset_session, close_session, shutdown. samc's options, by keyword: impl,
    threads. A session starts on a directory of JPEG frames or, beyond the
    official class, on frames in memory ((T, H, W, 3) uint8).
    """

    def __init__(self, model, *, impl=None, threads=0):
        if not isinstance(model, Model):
            raise _native.arg_error(f"model must be a samc.Model (samc.build_sam3_image_model(...)), got "
                                    f"{type(model).__name__}")
        model.need("sam3", "Sam3VideoPredictor")
        self.model = model
        self._impl = impl
        self._threads = _options.check_threads(threads)
        self._sessions = {}

    # ---- the request interface ---------------------------------------------------------

    def handle_request(self, request):
        kind = request["type"]
        if kind == "start_session":
            return self.start_session(request["resource_path"], request.get("session_id"))
        if kind == "add_prompt":
            return self.add_prompt(request["session_id"], request["frame_index"], text=request.get("text"),
                                   points=request.get("points"), point_labels=request.get("point_labels"),
                                   bounding_boxes=request.get("bounding_boxes"),
                                   bounding_box_labels=request.get("bounding_box_labels"),
                                   obj_id=request.get("obj_id"))
        if kind == "remove_object":
            return self.remove_object(request["session_id"], request["obj_id"],
                                      request.get("is_user_action", True))
        if kind == "reset_session":
            return self.reset_session(request["session_id"])
        if kind == "close_session":
            return self.close_session(request["session_id"])
        raise RuntimeError(f"invalid request type: {kind}")

    def handle_stream_request(self, request):
        if request["type"] != "propagate_in_video":
            raise RuntimeError(f"invalid request type: {request['type']}")
        yield from self.propagate_in_video(request["session_id"], request.get("propagation_direction", "both"),
                                           request.get("start_frame_index"), request.get("max_frame_num_to_track"))

    # ---- sessions ------------------------------------------------------------------------

    def start_session(self, resource_path, session_id=None):
        """A session on a directory of JPEG frames ("00000.jpg", ...) or on
        frames in memory ((T, H, W, 3) uint8, copied). Returns {"session_id"}."""
        params = ffi.new("samc_sam3_tracker_params *", lib.samc_sam3_tracker_default_params())
        impl = _native.text(self._impl)
        params.impl = impl
        params.n_threads = self._threads
        out = ffi.new("samc_sam3_tracker **")
        if isinstance(resource_path, np.ndarray):
            v = arrays.frames(resource_path)
            _native.call(lib.samc_sam3_tracker_new_frames, self.model._ptr, params, _native.ptr(v, "uint8_t[]"),
                         v.shape[0], v.shape[1], v.shape[2], out)
        elif isinstance(resource_path, (str, os.PathLike)):
            if os.path.isfile(resource_path):
                raise errors_unsupported(f"{resource_path}: samc's SAM 3 video sessions read a directory of "
                                         "JPEG frames or frames in memory, not a video or image file")
            _native.call(lib.samc_sam3_tracker_new, self.model._ptr, params, os.fsencode(resource_path), out)
        else:
            raise _native.arg_error("resource_path must be a directory of JPEG frames or a (T, H, W, 3) uint8 "
                                    f"array, got {type(resource_path).__name__}")
        session_id = session_id or str(uuid.uuid4())
        self._sessions[session_id] = ffi.gc(out[0], lib.samc_sam3_tracker_free)
        return {"session_id": session_id}

    def _tracker(self, session_id):
        t = self._sessions.get(session_id)
        if t is None:
            raise RuntimeError(f"Cannot find session {session_id}; it might have expired")
        return t

    def close_session(self, session_id):
        """Free the session (idempotent, as officially)."""
        t = self._sessions.pop(session_id, None)
        if t is not None:
            ffi.release(t)  # its destructor now, samc_sam3_tracker_free
        return {"is_success": True}

    def reset_session(self, session_id):
        """Forget the prompts, objects and results (the frames stay)."""
        lib.samc_sam3_tracker_reset(self._tracker(session_id))
        return {"is_success": True}

    def shutdown(self):
        for sid in list(self._sessions):
            self.close_session(sid)

    # ---- prompts ---------------------------------------------------------------------------

    def add_prompt(self, session_id, frame_idx, text=None, points=None, point_labels=None, bounding_boxes=None,
                   bounding_box_labels=None, obj_id=None):
        """A text and/or one box (x, y, w, h normalised to [0, 1], label 1 / 0:
        a new prompt, the session starts over) or clicks (points (N, 2)
        normalised, labels 1 / 0) on object obj_id. Returns {"frame_index",
        "outputs"}."""
        t = self._tracker(session_id)
        h, w = lib.samc_sam3_tracker_height(t), lib.samc_sam3_tracker_width(t)
        frames = []
        if points is not None:
            if text is not None or bounding_boxes is not None:
                raise _native.arg_error("When points are provided, text_str and boxes_xywh must be None.")
            if obj_id is None:
                raise _native.arg_error("When points are provided, obj_id must be provided.")
            pts = arrays.small(points, np.float32, "points")
            lab = arrays.small(point_labels, np.int32, "point_labels")
            if pts.ndim != 2 or pts.shape[1] != 2 or lab is None or lab.shape != (pts.shape[0],):
                raise _native.arg_error(f"points must be (N, 2) normalised with point_labels (N,), got "
                                        f"{pts.shape} and {None if lab is None else lab.shape}")
            px = np.ascontiguousarray(pts * np.array([w, h], np.float32))  # pixels, in float32
            _native.call(lib.samc_sam3_tracker_add_points, t, int(frame_idx), int(obj_id), _native.ptr(px, "float[]"),
                         _native.ptr(lab, "int32_t[]"), pts.shape[0], lib.samc_py_sam3_frame, ffi.NULL,
                         on_frame=lambda f: frames.append(_outputs(f)))
        else:
            box, positive = self._box(bounding_boxes, bounding_box_labels, h, w)
            _native.call(lib.samc_sam3_tracker_add_prompt, t, int(frame_idx), _native.text(text),
                         _native.ptr(box, "float[]"), positive, lib.samc_py_sam3_frame, ffi.NULL,
                         on_frame=lambda f: frames.append(_outputs(f)))
        return {"frame_index": int(frame_idx), "outputs": frames[-1] if frames else None}

    @staticmethod
    def _box(boxes, labels, h, w):
        """One normalised x, y, w, h box -> x0, y0, x1, y1 pixels (None: none)."""
        if boxes is None:
            return None, 1
        b = arrays.small(boxes, np.float32, "bounding_boxes").reshape(-1, 4) if np.size(boxes) else None
        if b is None or b.shape[0] != 1:
            raise errors_unsupported(f"bounding_boxes: samc takes one box per prompt, got "
                                     f"{0 if b is None else b.shape[0]}")
        lab = 1 if labels is None else arrays.small(labels, np.int32, "bounding_box_labels").reshape(-1)
        if not isinstance(lab, int) and lab.shape != (1,):
            raise _native.arg_error(f"bounding_box_labels must hold one label per box, got {lab.shape}")
        x, y, bw, bh = b[0]
        px = np.array([x * w, y * h, (x + bw) * w, (y + bh) * h], np.float32)
        return px, int(lab if isinstance(lab, int) else lab[0])

    def remove_object(self, session_id, obj_id, is_user_action=True):
        """Remove an object (an unknown id is refused with samc's message)."""
        err = _native.new_error()
        _native.raise_for(lib.samc_sam3_tracker_remove_object(self._tracker(session_id), int(obj_id), err), err)
        return {"is_success": True}

    # ---- tracking ----------------------------------------------------------------------------

    def propagate_in_video(self, session_id, propagation_direction="both", start_frame_idx=None,
                           max_frame_num_to_track=None):
        """A generator of {"frame_index", "outputs"} in the official order
        (forward, then backward for "both"), each computed (the GIL released)
        when the loop asks for it."""
        t = self._tracker(session_id)
        if propagation_direction not in _DIRECTIONS:
            raise ValueError(f"invalid propagation direction: {propagation_direction}")
        start = -1 if start_frame_idx is None else int(start_frame_idx)
        count = -1 if max_frame_num_to_track is None else int(max_frame_num_to_track)
        return self._propagate(t, _DIRECTIONS[propagation_direction], start, count)

    @staticmethod
    def _propagate(t, direction, start, count):
        """One samc_sam3_tracker_propagate in a worker thread whose frame
        callback hands each frame over and waits until the loop asks for the
        next: frames are computed as the loop consumes them (one ahead at
        most), and leaving the loop (or Ctrl-C) stops the C call at the next
        frame boundary, the session usable."""
        frames, more, stop, done = queue.Queue(), threading.Semaphore(0), threading.Event(), object()

        def on_frame(f):
            frames.put({"frame_index": int(f.frame), "outputs": _outputs(f)})
            more.acquire()
            if stop.is_set():
                raise _Stopped  # stops the C loop (samc._native records it)

        def work():
            try:
                _native.call(lib.samc_sam3_tracker_propagate, t, direction, start, count, lib.samc_py_sam3_frame,
                             ffi.NULL, on_frame=on_frame)
                frames.put(done)
            except BaseException as e:  # to the consumer (or dropped after a stop)
                frames.put(e)

        worker = threading.Thread(target=work, name="samc-sam3-propagate", daemon=True)
        worker.start()
        try:
            while True:
                item = frames.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
                more.release()
        finally:
            stop.set()
            more.release()
            worker.join()


class _Stopped(Exception):
    """The loop over propagate_in_video ended before the last frame."""
