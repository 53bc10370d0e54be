# SPDX-License-Identifier: Apache-2.0
"""SAM2AutomaticMaskGenerator over samc_amg_generate_masks (include/samc_amg.h).

    generator = samc.SAM2AutomaticMaskGenerator(model, points_per_side=32)
    records = generator.generate(image)       # the official list of dicts

Every official argument, with the official defaults and checks (the C side
refuses a bad value with a message naming it); the records are the official
ones, in the official order (docs/amg.md).
"""
import numpy as np

from . import _native, _options, arrays
from ._native import ffi, lib
from .image_predictor import SAM2ImagePredictor

_MODES = ("binary_mask", "uncompressed_rle", "coco_rle")


class SAM2AutomaticMaskGenerator:
    """sam2.automatic_mask_generator.SAM2AutomaticMaskGenerator on a samc Model.

    samc's keyword arguments: impl, threads, overrides (as the predictor's),
    progress (callable("amg", points_done, points_total) after each decoder
    batch). `predictor` is the SAM2ImagePredictor it runs, as in the official
    class.
    """

    def __init__(self, model, points_per_side=32, points_per_batch=64, pred_iou_thresh=0.8,
                 stability_score_thresh=0.95, stability_score_offset=1.0, mask_threshold=0.0, box_nms_thresh=0.7,
                 crop_n_layers=0, crop_nms_thresh=0.7, crop_overlap_ratio=512 / 1500,
                 crop_n_points_downscale_factor=1, point_grids=None, min_mask_region_area=0,
                 output_mode="binary_mask", use_m2m=False, multimask_output=True, *, impl=None, threads=0,
                 overrides=None, progress=None, **kwargs):
        if (points_per_side is None) == (point_grids is None):
            raise ValueError("Exactly one of points_per_side or point_grid must be provided.")
        if output_mode not in _MODES:
            raise ValueError(f"Unknown output_mode {output_mode}.")
        self.points_per_side = points_per_side
        self.points_per_batch = points_per_batch
        self.pred_iou_thresh = pred_iou_thresh
        self.stability_score_thresh = stability_score_thresh
        self.stability_score_offset = stability_score_offset
        self.mask_threshold = mask_threshold
        self.box_nms_thresh = box_nms_thresh
        self.crop_n_layers = crop_n_layers
        self.crop_nms_thresh = crop_nms_thresh
        self.crop_overlap_ratio = crop_overlap_ratio
        self.crop_n_points_downscale_factor = crop_n_points_downscale_factor
        self.point_grids = None if point_grids is None else [self._grid(g, i) for i, g in enumerate(point_grids)]
        self.min_mask_region_area = min_mask_region_area
        self.output_mode = output_mode
        self.use_m2m = use_m2m
        self.multimask_output = multimask_output
        self.predictor = SAM2ImagePredictor(model, max_hole_area=min_mask_region_area,
                                            max_sprinkle_area=min_mask_region_area, impl=impl, threads=threads,
                                            overrides=overrides)
        self._progress = progress
        self._params()  # every value checked now, as the official constructor does

    @staticmethod
    def _grid(g, i):
        a = arrays.small(g, np.float64, f"point_grids[{i}]")
        if a.ndim != 2 or a.shape[1] != 2 or a.shape[0] == 0:
            raise _native.arg_error(f"point_grids[{i}] must be (N, 2) points in [0, 1], got shape {a.shape}")
        return a

    def _params(self):
        p = ffi.new("samc_amg_params *", lib.samc_amg_default_params())
        keep = []
        ints = ("points_per_batch", "crop_n_layers", "crop_n_points_downscale_factor")
        for name in ints:
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                raise _native.arg_error(f"{name} must be an integer, got {v!r}")
            setattr(p, name, int(v))
        for name in ("pred_iou_thresh", "stability_score_thresh", "stability_score_offset", "mask_threshold",
                     "box_nms_thresh", "crop_nms_thresh", "crop_overlap_ratio"):
            setattr(p, name, float(getattr(self, name)))
        p.points_per_side = 0 if self.points_per_side is None else int(self.points_per_side)
        if self.point_grids is not None:
            grids = ffi.new("samc_amg_grid[]", len(self.point_grids))
            for i, g in enumerate(self.point_grids):
                xy = _native.ptr(g, "double[]")
                keep.append(xy)
                grids[i].xy, grids[i].n = xy, g.shape[0]
            keep.append(grids)
            p.point_grids, p.n_point_grids = grids, len(self.point_grids)
        p.min_mask_region_area = int(self.min_mask_region_area)
        p.output_mode = {"binary_mask": lib.SAMC_AMG_BINARY_MASK, "uncompressed_rle": lib.SAMC_AMG_UNCOMPRESSED_RLE,
                         "coco_rle": lib.SAMC_AMG_COCO_RLE}[self.output_mode]
        p.use_m2m, p.multimask_output = bool(self.use_m2m), bool(self.multimask_output)
        return p, keep

    def generate(self, image):
        """The records of every mask found in an (H, W, 3) uint8 RGB image:
        segmentation (bool (H, W), or the RLE dict of output_mode), area,
        bbox (XYWH), predicted_iou, point_coords, stability_score, crop_box."""
        img = arrays.image(image)
        params, keep = self._params()
        result = ffi.gc(ffi.new("samc_amg_result *"), lib.samc_amg_result_free)
        progress = lib.samc_py_amg_progress if self._progress is not None else ffi.NULL
        _native.call(lib.samc_amg_generate_masks, self.predictor._ptr, _native.ptr(img, "uint8_t[]"), img.shape[0],
                     img.shape[1], params, progress, ffi.NULL, result, abort=self.predictor._abort,
                     progress=self._progress)
        del keep
        return [self._record(result, result.masks[i]) for i in range(result.n)]

    def _record(self, owner, m):
        size = [int(m.height), int(m.width)]
        if self.output_mode == "binary_mask":  # a view of samc's 0/1 bytes, no copy
            seg = _native.view(owner, m.binary, (m.height, m.width), np.bool_)
        elif self.output_mode == "coco_rle":
            seg = {"size": size, "counts": ffi.string(m.coco_counts).decode("ascii")}
        else:
            seg = {"size": size, "counts": _native.copy_out(m.counts, (m.n_counts,), np.int64).tolist()}
        return {
            "segmentation": seg,
            "area": int(m.area),
            "bbox": [float(v) for v in m.bbox],
            "predicted_iou": float(m.predicted_iou),
            "point_coords": [[float(m.point_coords[0]), float(m.point_coords[1])]],
            "stability_score": float(m.stability_score),
            "crop_box": [float(v) for v in m.crop_box],
        }
