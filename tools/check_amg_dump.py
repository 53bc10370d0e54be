#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Format and consistency checker for automatic-mask-generator dumps
(docs/parity_amg.md), with numpy only (no torch, no official code):

  /usr/bin/python3 tools/check_amg_dump.py fixtures/amg/*.h5

Checks: root/inputs/outputs layout and dtypes; every record's RLE decodes to
H x W, equals `mask_logits > float32(mask_threshold)` zero-padded from its
crop, and gives `area` and the inclusive XYWH `bbox`; coco strings decode to
the counts; `crop_box` is one of `crops/box`; the candidate table agrees with
the records (record_index, IoU, stability, point + crop offset) and its
filter flags are consistent; each NMS call's `candidates` rows are the
candidates that reach it and its kept rows lead to the records; grids have
the size the parameters give; trace records carry crop/batch attributes.
"""

import sys

import h5py
import numpy as np

from coco_rle import coco_decode

PARAMS_INT = ("points_per_batch", "crop_n_layers", "crop_n_points_downscale_factor",
              "min_mask_region_area")
PARAMS_FLOAT = ("pred_iou_thresh", "stability_score_thresh", "stability_score_offset",
                "mask_threshold", "box_nms_thresh", "crop_nms_thresh", "crop_overlap_ratio")


class Fail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise Fail(msg)


def rle_decode(counts, h, w):
    flat = np.zeros(h * w, bool)
    pos, val = 0, False
    for c in counts:
        flat[pos:pos + c] = val
        pos += c
        val = not val
    need(pos == h * w, f"counts sum to {pos}, expected {h * w}")
    return flat.reshape(w, h).T


def check_inputs(f):
    g = f["inputs"]
    need(g.attrs["task"] == "amg", "task is not amg")
    img = g["image_u8"]
    need(img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3, "image_u8")
    p = {k: int(g.attrs[k]) for k in PARAMS_INT}
    p.update({k: float(g.attrs[k]) for k in PARAMS_FLOAT})
    for k in ("use_m2m", "multimask_output"):
        need(g.attrs[k].dtype == np.int32, f"{k} must be int32 0/1")
        p[k] = bool(g.attrs[k])
    pps = g.attrs["points_per_side"]
    p["points_per_side"] = None if isinstance(pps, h5py.Empty) else int(pps)
    p["output_mode"] = g.attrs["output_mode"]
    grids = [g["point_grids"][str(i)][()] for i in range(len(g["point_grids"]))]
    need(len(grids) >= p["crop_n_layers"] + 1, "fewer point grids than crop layers")
    for i, grid in enumerate(grids):
        need(grid.dtype == np.float64 and grid.shape[1] == 2, f"point_grids/{i}")
        if p["points_per_side"]:
            n = int(p["points_per_side"] / p["crop_n_points_downscale_factor"] ** i)
            need(len(grid) == n * n, f"point_grids/{i}: {len(grid)} points, expected {n * n}")
    return img.shape[:2], p


def check_records(o, hw, p):
    h, w = hw
    m = int(o.attrs["num_masks"])
    need(tuple(o["segmentation_size"][()]) == (h, w), "segmentation_size")
    counts, offs = o["segmentation_counts"][()], o["segmentation_offsets"][()]
    logits, loffs = o["mask_logits"][()], o["mask_logits_offsets"][()]
    crops = o["crops/box"][()]
    need(len(offs) == m + 1 and len(loffs) == m + 1, "offsets length")
    thr = np.float32(p["mask_threshold"])
    for k in range(m):
        mask = rle_decode(counts[offs[k]:offs[k + 1]].tolist(), h, w)
        x, y, bw, bh = o["crop_box"][k]
        need(any((crops[:, 0] == x) & (crops[:, 1] == y) & (crops[:, 2] - crops[:, 0] == bw)
                 & (crops[:, 3] - crops[:, 1] == bh)), f"record {k}: crop_box not a crop")
        x, y, bw, bh = int(x), int(y), int(bw), int(bh)
        crop_logits = logits[loffs[k]:loffs[k + 1]].reshape(bh, bw)
        expect = np.zeros((h, w), bool)
        expect[y:y + bh, x:x + bw] = crop_logits > thr
        need((mask == expect).all(), f"record {k}: RLE != mask_logits > threshold")
        need(int(o["area"][k]) == int(mask.sum()), f"record {k}: area")
        ys, xs = np.nonzero(mask)
        box = [xs.min(), ys.min(), xs.max() - xs.min(), ys.max() - ys.min()] if len(xs) else \
            [0, 0, 0, 0]
        need(list(o["bbox"][k]) == [float(v) for v in box], f"record {k}: bbox")
        if p["output_mode"] == "coco_rle":
            s = o["segmentation_coco"][k]
            s = s.decode() if isinstance(s, bytes) else s
            need(coco_decode(s) == counts[offs[k]:offs[k + 1]].tolist(), f"record {k}: coco")
    return m


def check_candidates(o, p, m):
    c = o["candidates"]
    ri = c["record_index"][()]
    need(sorted(ri[ri >= 0].tolist()) == list(range(m)), "record_index does not cover records")
    crops = o["crops/box"][()]
    for k in range(m):
        i = int(np.nonzero(ri == k)[0][0])
        crop = crops[c["crop_index"][i]]
        need(c["predicted_iou"][i] == o["predicted_iou"][k], f"record {k}: predicted_iou")
        need(c["stability_score"][i] == o["stability_score"][k], f"record {k}: stability")
        pt = (c["point_coords"][i] + crop[:2].astype(np.float32)).astype(np.float32)
        need((pt == o["point_coords"][k]).all(), f"record {k}: point_coords")
    thr = np.float32(p["pred_iou_thresh"])
    keep_iou = c["predicted_iou"][()] > thr if p["pred_iou_thresh"] > 0 else True
    need((c["keep_iou"][()] == keep_iou).all(), "keep_iou flags")
    st = np.float32(p["stability_score_thresh"])
    keep_st = c["stability_score"][()] >= st if p["stability_score_thresh"] > 0 else True
    need((c["keep_stability"][()] == (c["keep_iou"][()] & keep_st)).all(), "keep_stability")
    return ri


def check_nms(o, ri, n_crops):
    c = o["candidates"]
    entering = (c["keep_stability"][()] == 1) & (c["near_crop_edge"][()] == 0)
    calls = [o["nms"][str(k)] for k in range(len(o["nms"]))]
    need(len(calls) == n_crops + (n_crops > 1), f"{len(calls)} NMS calls for {n_crops} crops")
    survivors = []
    for k in range(n_crops):
        rows = calls[k]["candidates"][()]
        want = np.nonzero(entering & (c["crop_index"][()] == k))[0]
        need((rows == want).all(), f"nms/{k}: rows are not crop {k}'s entering candidates")
        survivors.append(rows[calls[k]["keep"][()]])
    final = survivors[0] if n_crops == 1 else \
        calls[-1]["candidates"][()][calls[-1]["keep"][()]]
    if n_crops > 1:
        need((calls[-1]["candidates"][()] == np.concatenate(survivors)).all(),
             "crop NMS rows are not the crops' survivors")
    need((ri[final] == np.arange(len(final))).all(), "NMS survivors are not the records")


def check_trace(f):
    if "trace" not in f:
        return 0
    for name, g in f["trace"].items():
        need("crop_index" in g.attrs and "batch_index" in g.attrs, f"trace/{name}: context")
    return len(f["trace"])


def check(path):
    with h5py.File(path, "r") as f:
        need(f.attrs["format"] == "samc-parity-dump" and f.attrs["format_version"] == 1, "root")
        hw, p = check_inputs(f)
        o = f["outputs"]
        m = check_records(o, hw, p)
        ri = check_candidates(o, p, m)
        check_nms(o, ri, len(o["crops/box"]))
        n_trace = check_trace(f)
    return f"{m} records, {len(ri)} candidates, {n_trace} trace records"


def main():
    bad = 0
    for path in sys.argv[1:]:
        try:
            print(f"{path}: ok ({check(path)})")
        except (Fail, KeyError) as e:
            print(f"{path}: FAIL {e}")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
