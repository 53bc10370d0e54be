# SPDX-License-Identifier: Apache-2.0
"""SAM2AutomaticMaskGenerator on the committed generator dumps (every
official parameter as the dump recorded it): the official records within the
harness rules, and the C API's records exactly."""
import json

import numpy as np
import pytest

import samc
import capi
from conftest import AMG_DUMPS, TOL, build_sam2, ids, read_dump, rel

PARAMS = ("points_per_side", "points_per_batch", "pred_iou_thresh", "stability_score_thresh",
          "stability_score_offset", "mask_threshold", "box_nms_thresh", "crop_n_layers", "crop_nms_thresh",
          "crop_overlap_ratio", "crop_n_points_downscale_factor", "min_mask_region_area", "output_mode", "use_m2m",
          "multimask_output")


def generator_args(dump):
    kw = {k: dump["inputs"][k] for k in PARAMS}
    kw["use_m2m"], kw["multimask_output"] = bool(kw["use_m2m"]), bool(kw["multimask_output"])
    if kw["points_per_side"] is None:
        kw["point_grids"] = dump["point_grids"]
    return kw


def rle_to_mask(counts, h, w):
    """The official rle_to_mask: column-major runs starting with zeros."""
    flat = np.zeros(h * w, bool)
    pos, val = 0, False
    for c in counts:
        flat[pos:pos + c] = val
        pos, val = pos + c, not val
    return flat.reshape(w, h).T


@pytest.mark.parametrize("path", AMG_DUMPS, ids=ids(AMG_DUMPS))
def test_generate_matches_official_and_c(path):
    dump = read_dump(path)
    kw = generator_args(dump)
    img = dump["arrays"]["image_u8"]
    H, W = img.shape[:2]
    gen = samc.SAM2AutomaticMaskGenerator(build_sam2(path), **kw)
    records = gen.generate(img)
    out = dump["outputs"]
    assert len(records) == out["num_masks"]
    offs = out["segmentation_offsets"]
    for m, r in enumerate(records):
        assert set(r) == {"segmentation", "area", "bbox", "predicted_iou", "point_coords", "stability_score",
                          "crop_box"}
        counts = out["segmentation_counts"][offs[m]:offs[m + 1]]
        seg = r["segmentation"]
        if kw["output_mode"] == "binary_mask":
            assert seg.dtype == np.bool_ and seg.shape == (H, W)
            np.testing.assert_array_equal(seg, rle_to_mask(counts, H, W))
        elif kw["output_mode"] == "coco_rle":
            assert seg == {"size": [H, W], "counts": out["segmentation_coco"][m].decode()}
        else:
            assert seg == {"size": [H, W], "counts": counts.tolist()}
        assert r["area"] == out["area"][m] and isinstance(r["area"], int)
        assert r["bbox"] == out["bbox"][m].tolist() and r["crop_box"] == out["crop_box"][m].tolist()
        assert r["point_coords"] == [out["point_coords"][m].tolist()]
    for key in ("predicted_iou", "stability_score"):
        assert rel([r[key] for r in records], out[key]) <= TOL["fast"]
    # the C API's records (samc_amg_to_json), value for value
    oracle = capi.Predictor(capi.Model(path))
    c = json.loads(oracle.amg_json(img, **{k: v for k, v in kw.items() if k not in ("points_per_side",)
                                           or v is not None}))
    assert len(c) == len(records)
    for a, b in zip(c, records):
        seg = b["segmentation"]
        counts = (seg["counts"] if isinstance(seg, dict) else None)
        if counts is not None:
            assert a["segmentation"]["counts"] == counts
        for key in ("area", "bbox", "predicted_iou", "point_coords", "stability_score", "crop_box"):
            # the JSON holds the shortest decimal that reads back as the float32
            np.testing.assert_array_equal(np.float32(a[key]), np.float32(b[key]), key)


def test_defaults_and_bad_parameters():
    path = AMG_DUMPS[0]
    model = build_sam2(path)
    gen = samc.SAM2AutomaticMaskGenerator(model)
    assert (gen.points_per_side, gen.points_per_batch, gen.pred_iou_thresh, gen.output_mode) == (32, 64, 0.8,
                                                                                             "binary_mask")
    assert isinstance(gen.predictor, samc.SAM2ImagePredictor)
    with pytest.raises(ValueError, match="Exactly one of points_per_side"):
        samc.SAM2AutomaticMaskGenerator(model, points_per_side=None)
    with pytest.raises(ValueError, match="Unknown output_mode"):
        samc.SAM2AutomaticMaskGenerator(model, output_mode="png")
    with pytest.raises(samc.SamcArgumentError, match="crop_overlap_ratio"):
        samc.SAM2AutomaticMaskGenerator(model, crop_overlap_ratio=1.5).generate(np.zeros((8, 8, 3), np.uint8))
    with pytest.raises(samc.SamcArgumentError, match="points_per_batch"):
        samc.SAM2AutomaticMaskGenerator(model, points_per_batch=2.5)
