# SPDX-License-Identifier: Apache-2.0
"""SAM2ImagePredictor over samc_predictor (include/samc.h, samc_amg.h).

    predictor = samc.SAM2ImagePredictor(samc.build_sam2(cfg, "sam2.1_hiera_tiny.pt"))
    predictor.set_image(image)                       # (H, W, 3) uint8 RGB, or a PIL image
    masks, ious, low_res = predictor.predict(point_coords=[[500, 375]], point_labels=[1])

Shapes and dtypes are the official ones: for one prompt (C, H, W), (C,),
(C, S/4, S/4) float32; for B prompts (boxes (B, 4), points (B, N, 2))
(B, C, H, W), (B, C), (B, C, S/4, S/4). The arrays are the library's own
buffers, handed over without a copy.
"""
import numpy as np

from . import _native, _options, arrays
from ._native import ffi, lib
from .model import Model


class SAM2ImagePredictor:
    """sam2.sam2_image_predictor.SAM2ImagePredictor on a samc Model.

    Official arguments: sam_model, mask_threshold, max_hole_area,
    max_sprinkle_area. samc's, by keyword: impl ("fast", "ref", "bf16"),
    threads (0: OpenMP's default), overrides ({"LAYER": "IMPL"} or
    ["LAYER=IMPL"]), progress (callable(what, done, total) during set_image).
    """

    def __init__(self, sam_model, mask_threshold=0.0, max_hole_area=0.0, max_sprinkle_area=0.0, *, impl=None,
                 threads=0, overrides=None, progress=None, **kwargs):
        if not isinstance(sam_model, Model):
            raise _native.arg_error(f"sam_model must be a samc.Model (samc.build_sam2(...)), got "
                                    f"{type(sam_model).__name__}")
        sam_model.need("sam2", "SAM2ImagePredictor")
        if mask_threshold != 0.0 and (max_hole_area > 0 or max_sprinkle_area > 0):
            from .model import errors_unsupported

            raise errors_unsupported("mask_threshold != 0 with hole or sprinkle filling: samc fills at logit 0")
        self.model = sam_model
        self.mask_threshold = float(mask_threshold)
        params = ffi.new("samc_predictor_params *", lib.samc_predictor_default_params())
        self._impl_name = _native.text(impl)
        params.impl = self._impl_name
        params.n_threads = _options.check_threads(threads)
        params.max_hole_area, params.max_sprinkle_area = float(max_hole_area), float(max_sprinkle_area)
        self._progress = _options.progress_args(params, progress)
        self._abort = _native.abort_args(params)
        out = ffi.new("samc_predictor **")
        err = _native.new_error()
        _native.raise_for(lib.samc_predictor_new(sam_model._ptr, params, out, err), err)
        self._ptr = ffi.gc(out[0], lib.samc_predictor_free)
        _options.apply_overrides(lib.samc_predictor_override, self._ptr, overrides)
        self._batch = None
        self.reset_predictor()

    # ---- what it runs with --------------------------------------------------

    @property
    def impl(self):
        return ffi.string(lib.samc_predictor_impl(self._ptr)).decode()

    @property
    def threads(self):
        return lib.samc_predictor_threads(self._ptr)

    @property
    def device(self):
        return "cpu"

    @property
    def low_res_size(self):
        return lib.samc_predictor_low_res_size(self._ptr)

    # ---- images ------------------------------------------------------------------

    def reset_predictor(self):
        """Forget the image (or images): predict needs set_image again."""
        self._is_image_set = False
        self._is_batch = False
        self._orig_hw = None
        self._batch = None

    def set_image(self, image):
        """The image embedding of one (H, W, 3) uint8 RGB image (or PIL image)."""
        img = arrays.image(image)  # checked first: a refused image leaves the predictor as it was
        self.reset_predictor()
        h, w = img.shape[:2]
        _native.call(lib.samc_predictor_set_image, self._ptr, _native.ptr(img, "uint8_t[]"), h, w,
                     abort=self._abort, progress=self._progress)
        self._orig_hw = [(h, w)]
        self._is_image_set = True

    def set_image_batch(self, image_list):
        """The embeddings of several images, for predict_batch."""
        if not isinstance(image_list, (list, tuple)) or not image_list:
            raise _native.arg_error("image_list must be a non-empty list of (H, W, 3) uint8 arrays")
        imgs = [arrays.image(im, f"image_list[{i}]") for i, im in enumerate(image_list)]
        self.reset_predictor()
        n = len(imgs)
        ptrs = [_native.ptr(im, "uint8_t[]") for im in imgs]
        rgb = ffi.new("uint8_t *[]", ptrs)
        hs = ffi.new("int[]", [im.shape[0] for im in imgs])
        ws = ffi.new("int[]", [im.shape[1] for im in imgs])
        out = ffi.new("samc_image_batch **")
        _native.call(lib.samc_image_batch_set, self._ptr, n, rgb, hs, ws, out, abort=self._abort,
                     progress=self._progress)
        self._batch = ffi.gc(out[0], lib.samc_image_batch_free)
        self._orig_hw = [im.shape[:2] for im in imgs]
        self._is_image_set = True
        self._is_batch = True

    def get_image_embedding(self):
        """The image embedding (1, C, H, W) of the image set (a copy)."""
        self._need_image("to generate an embedding")
        data = ffi.new("float **")
        dims = ffi.new("int[3]")
        err = _native.new_error()
        st = lib.samc_predictor_get_embedding(self._ptr, data, dims, dims + 1, dims + 2, err)
        _native.raise_for(st, err)
        return arrays.tensor(_native.copy_out(data[0], (1, dims[0], dims[1], dims[2])))

    def _need_image(self, what="before mask prediction", batch=False):
        if not self._is_image_set:
            call = "set_image_batch" if batch else "set_image"
            raise RuntimeError(f"An image must be set with .{call}(...) {what}.")
        if batch and not self._is_batch:
            raise RuntimeError("predict_batch needs images set with .set_image_batch(...)")
        if not batch and self._is_batch and what == "before mask prediction":
            raise RuntimeError("predict needs an image set with .set_image(...); after set_image_batch use "
                               "predict_batch")

    # ---- prompts -> masks ---------------------------------------------------------

    def predict(self, point_coords=None, point_labels=None, box=None, mask_input=None, multimask_output=True,
                return_logits=False, normalize_coords=True):
        """Masks for one prompt ((N, 2) points and/or a (4,) box and/or a
        (1, S/4, S/4) mask input) or B prompts ((B, N, 2) points, (B, 4)
        boxes, (B, 1, S/4, S/4) mask inputs): (masks, iou_predictions,
        low_res_masks) as the official predictor returns them."""
        self._need_image()
        prompt = self._prompts(point_coords, point_labels, box, mask_input, normalize_coords)
        return self._run(prompt, multimask_output, return_logits, None)

    def predict_batch(self, point_coords_batch=None, point_labels_batch=None, box_batch=None,
                      mask_input_batch=None, multimask_output=True, return_logits=False, normalize_coords=True):
        """predict on each image of set_image_batch with its own prompts:
        lists (one entry per image) of masks, iou_predictions, low_res_masks."""
        self._need_image(batch=True)
        out = ([], [], [])
        for i in range(len(self._orig_hw)):
            def pick(x):
                return None if x is None else x[i]

            prompt = self._prompts(pick(point_coords_batch), pick(point_labels_batch), pick(box_batch),
                                   pick(mask_input_batch), normalize_coords)
            for acc, r in zip(out, self._run(prompt, multimask_output, return_logits, i)):
                acc.append(r)
        return out

    def _prompts(self, point_coords, point_labels, box, mask_input, normalize_coords):
        """_prep_prompts: the prompt as B rows of the official tensors.
        normalize_coords=False: points and boxes are already in [0, 1] of the
        image width and height (the library scales them by the model size)."""
        coords = labels = boxes = None
        if point_coords is not None:
            if point_labels is None:
                raise _native.arg_error("point_labels must be supplied if point_coords is supplied.")
            coords = arrays.small(point_coords, np.float32, "point_coords")
            labels = arrays.small(point_labels, np.int32, "point_labels")
            if coords.ndim == 2:
                coords, labels = coords[None], labels[None] if labels.ndim == 1 else labels
            if coords.ndim != 3 or coords.shape[2] != 2:
                raise _native.arg_error(f"point_coords must be (N, 2) or (B, N, 2), got shape {coords.shape}")
            if labels.shape != coords.shape[:2]:
                raise _native.arg_error(f"point_labels must have shape {coords.shape[:2]} to match point_coords "
                                        f"{coords.shape}, got {labels.shape}")
        if box is not None:
            boxes = arrays.small(box, np.float32, "box")
            if boxes.size == 0 or boxes.shape[-1] != 4:
                raise _native.arg_error(f"box must be (4,) or (B, 4) x0, y0, x1, y1, got shape {boxes.shape}")
            boxes = np.ascontiguousarray(boxes.reshape(-1, 4))
        if coords is not None and coords.shape[1] == 0 and (boxes is not None or coords.shape[0] == 1):
            coords = labels = None  # (1, 0, 2): no points
        B = coords.shape[0] if coords is not None else boxes.shape[0] if boxes is not None else 1
        if coords is not None and boxes is not None and boxes.shape[0] != B:
            raise _native.arg_error(f"{boxes.shape[0]} boxes but {B} point prompts: give one box per prompt "
                                    "((B, 4) boxes with (B, N, 2) points)")
        S = self.low_res_size
        if mask_input is not None:
            if isinstance(mask_input, np.ndarray) and mask_input.ndim == 3:
                mask = arrays.float_map(mask_input, (1, S, S), "mask_input")
            else:
                mask = arrays.float_map(mask_input, (None, 1, S, S), "mask_input")
            if mask.shape[0] == 1 and B > 1:  # one mask for every prompt, as torch broadcasts it
                mask = np.ascontiguousarray(np.broadcast_to(mask.reshape(1, S, S), (B, S, S)))
            elif mask.shape[0] != B:
                raise _native.arg_error(f"{mask.shape[0]} mask inputs for {B} prompts")
        else:
            mask = None
        return B, coords, labels, boxes, mask, bool(normalize_coords)

    def _run(self, prompt, multimask_output, return_logits, image_index):
        B, coords, labels, boxes, mask, pixels = prompt
        logits = bool(return_logits) or self.mask_threshold != 0.0
        if B == 1 and image_index is None:
            masks, iou, low = self._predict_one(coords, labels, boxes, mask, multimask_output, logits, pixels)
        else:
            masks, iou, low = self._predict_many(B, coords, labels, boxes, mask, multimask_output, logits,
                                                 image_index, pixels)
            if B == 1:  # squeeze(0), as the official predictor returns one prompt's result
                masks, iou, low = masks[0], iou[0], low[0]
        if logits and not return_logits:
            masks = (masks > np.float32(self.mask_threshold)).astype(np.float32)
        return masks, iou, low

    def _predict_one(self, coords, labels, boxes, mask, multimask_output, logits, pixels):
        rq = ffi.new("samc_predict_request *")
        keep = [_native.ptr(coords, "float[]"), _native.ptr(labels, "int32_t[]"), _native.ptr(boxes, "float[]"),
                _native.ptr(mask, "float[]")]
        rq.point_coords, rq.point_labels, rq.box, rq.mask_input = keep
        rq.n_points = 0 if coords is None else coords.shape[1]
        rq.multimask_output = 1 if multimask_output else 0
        rq.return_logits = 1 if logits else 0
        rq.normalized_coords = 0 if pixels else 1
        m = ffi.gc(ffi.new("samc_masks *"), lib.samc_masks_free)
        _native.call(lib.samc_predictor_predict, self._ptr, rq, m, abort=self._abort)
        C, H, W, S = m.num_masks, m.height, m.width, m.low_res_size
        return (_native.view(m, m.masks, (C, H, W)), _native.view(m, m.iou, (C,)),
                _native.view(m, m.low_res, (C, S, S)))

    def _predict_many(self, B, coords, labels, boxes, mask, multimask_output, logits, image_index, pixels):
        rq = ffi.new("samc_batch_request *")
        keep = [_native.ptr(coords, "float[]"), _native.ptr(labels, "int32_t[]"), _native.ptr(boxes, "float[]"),
                _native.ptr(mask, "float[]")]
        rq.point_coords, rq.point_labels, rq.boxes, rq.mask_input = keep
        rq.batch = B
        rq.n_points = 0 if coords is None else coords.shape[1]
        rq.multimask_output = 1 if multimask_output else 0
        rq.return_logits = 1 if logits else 0
        rq.normalized_coords = 0 if pixels else 1
        m = ffi.gc(ffi.new("samc_batch_masks *"), lib.samc_batch_masks_free)
        if image_index is None:
            _native.call(lib.samc_predictor_predict_batch, self._ptr, rq, m, abort=self._abort)
        else:
            _native.call(lib.samc_image_batch_predict, self._ptr, self._batch, image_index, rq, m, abort=self._abort)
        C, H, W, S = m.num_masks, m.height, m.width, m.low_res_size
        return (_native.view(m, m.masks, (B, C, H, W)), _native.view(m, m.iou, (B, C)),
                _native.view(m, m.low_res, (B, C, S, S)))
