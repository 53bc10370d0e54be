#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Expected values for the C tests of core/amg/ (tests/test_amg_*.c), computed
with the OFFICIAL functions of sam2/utils/amg.py, torchvision 0.14's
batched_nms, torch 1.13's sort and OpenCV's connectedComponentsWithStats, and
for the COCO string with an independent Python re-statement of pycocotools'
rleToString (pycocotools is not in Debian) plus published vectors.

Inputs are not stored: masks, logits, boxes and scores come from the integer
hash hval() below, which tests/util/amg_inputs.c implements the same way, so
the JSON holds only case parameters and results (big results as digests).

  SAM2_SRC=/work/ext/sam2 /usr/bin/python3 tools/make_amg_testdata.py \
      --out tests/data/amg/amg_cases.json
"""

import argparse
import json
import math

import numpy as np
import torch

import amg_env
from coco_rle import coco_decode, coco_string

M64 = (1 << 64) - 1


# --------------------------------------------------------------------------
# Inputs shared with tests/util/amg_inputs.c
# --------------------------------------------------------------------------

def hval_at(idx, seed):
    """float32 in [0, 1) for uint64 indices idx (same as amg_hval)."""
    u = (idx * 2654435761 + seed * 2246822519) & 0xffffffff
    u ^= u >> 13
    u = (u * 3266489917) & 0xffffffff
    u ^= u >> 16
    return ((u >> 8).astype(np.float64) / 16777216.0).astype(np.float32)


def hval(n, seed):
    """hval_at for indices 0..n-1."""
    return hval_at(np.arange(n, dtype=np.uint64), seed)


def hash_mask(h, w, seed, density, block, noise):
    """Blocky random mask XOR sparse noise (amg_hash_mask)."""
    yy, xx = np.mgrid[0:h, 0:w]
    idx = ((yy // block) * 65537 + (xx // block)).astype(np.uint64).ravel()
    base = hval_at(idx, seed) < np.float32(density)
    flip = hval(h * w, seed + 1) < np.float32(noise)
    return (base ^ flip).reshape(h, w)


def hash_values(n, seed, scale, quant):
    """float32 (hval - 0.5) * scale, rounded to multiples of 1/quant when
    quant > 0 (amg_hash_values)."""
    t = (hval(n, seed) - np.float32(0.5)) * np.float32(scale)
    if quant > 0:
        t = np.rint(t * np.float32(quant)) / np.float32(quant)
    return t.astype(np.float32)


def hash_boxes(n, seed, extent, max_size):
    """Integer boxes as float32 [n, 4] (amg_hash_boxes): x0, y0 in
    [0, extent), sizes in [0, max_size)."""
    v = hval(4 * n, seed).reshape(n, 4).astype(np.float64)
    x0 = np.floor(v[:, 0] * extent)
    y0 = np.floor(v[:, 1] * extent)
    bw = np.floor(v[:, 2] * max_size)
    bh = np.floor(v[:, 3] * max_size)
    return np.stack([x0, y0, x0 + bw, y0 + bh], 1).astype(np.float32)


def digest(values):
    """sum(v[i] * (2i + 1)) mod 2^64 as 16 hex digits (amg_digest)."""
    acc = 0
    for i, v in enumerate(np.asarray(values).astype(np.int64).ravel().tolist()):
        acc = (acc + (v & M64) * (2 * i + 1)) & M64
    return f"{acc:016x}"


def f32(x):
    """A float32 value as the exact double JSON round-trips."""
    return float(np.float32(x))


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

def grid_cases(amg):
    out = {"full": [], "side": [], "layers": []}
    for n in range(1, 9):
        out["full"].append({"n": n, "points": amg.build_point_grid(n).ravel().tolist()})
    for n in (9, 16, 31, 32, 33, 64, 100, 128, 1000, 1024):
        g = amg.build_point_grid(n)
        out["side"].append({"n": n, "x": g[:n, 0].tolist()})
    for n, layers, scale in ((32, 0, 1), (32, 3, 2), (33, 2, 2), (100, 3, 3), (7, 2, 2),
                             (64, 1, 4), (5, 2, 1)):
        grids = amg.build_all_layer_point_grids(n, layers, scale)
        out["layers"].append({"n": n, "layers": layers, "scale": scale,
                              "sides": [int(round(math.sqrt(len(g)))) for g in grids]})
    # points_for_image = grid * [w, h] then float32 (_process_crop, _process_batch)
    g = amg.build_point_grid(7)
    for w, h in ((1500, 1000), (77, 131)):
        pts = torch.as_tensor(g * np.array((h, w))[None, ::-1], dtype=torch.float32)
        out.setdefault("crop_points", []).append(
            {"n": 7, "w": w, "h": h, "points": [float(v) for v in pts.ravel()]})
    return out


def crop_cases(amg):
    cases = []
    sizes = ((96, 128), (100, 150), (480, 640), (1500, 2250), (7, 300), (1, 1), (3, 2),
             (37, 23), (1024, 1024), (64, 80))
    for h, w in sizes:
        for layers in range(0, 5):
            for ratio in (512 / 1500, 0.0, 0.5, 0.9):
                boxes, idx = amg.generate_crop_boxes((h, w), layers, ratio)
                ok = all(b[0] >= 0 and b[1] >= 0 and b[2] > b[0] and b[3] > b[1] for b in boxes)
                case = {"h": h, "w": w, "layers": layers, "ratio": ratio, "valid": ok}
                if ok:
                    flat = [v for b, i in zip(boxes, idx) for v in list(b) + [i]]
                    case["n_boxes"] = len(boxes)
                    case["digest"] = digest(flat)
                    if len(boxes) <= 21:
                        case["boxes"] = flat
                cases.append(case)
    return cases


def stability_cases(amg):
    cases = []
    specs = [  # h, w, seed, scale, quant, mask_threshold, offset
        (13, 17, 1, 8.0, 4.0, 0.0, 1.0), (13, 17, 2, 8.0, 4.0, 0.25, 0.5),
        (40, 30, 3, 20.0, 0.0, 0.0, 1.0), (40, 30, 4, 20.0, 2.0, -1.5, 1.0),
        (8, 8, 5, 0.5, 0.0, 2.0, 1.0),            # nothing above 2 - 1: 0/0 = NaN
        (64, 64, 6, 6.0, 8.0, 0.1, 0.3),          # 0.1 + 0.3 != 0.4 in float32 after the sum
        (2, 40000, 7, 8.0, 4.0, 0.0, 1.0),        # int16 row counts wrap (> 32767 columns)
        (3, 33000, 8, 40.0, 0.0, 0.0, 1.0),
    ]
    for h, w, seed, scale, quant, thr, off in specs:
        logits = torch.from_numpy(hash_values(h * w, seed, scale, quant).reshape(1, h, w))
        s = amg.calculate_stability_score(logits, thr, off)[0]
        cases.append({"h": h, "w": w, "seed": seed, "scale": scale, "quant": quant,
                      "mask_threshold": thr, "offset": off,
                      "score": None if torch.isnan(s) else f32(s)})
    # float32 comparison of thresholds: value == float32(thr) is not > thr
    checks = []
    for v, thr in ((0.1, 0.1), (0.8, 0.8), (0.80000007, 0.8), (0.95, 0.95), (0.0, 0.0),
                   (0.3, 0.3000000001)):
        t = torch.tensor([v], dtype=torch.float32)
        checks.append({"value": f32(v), "thresh": thr, "gt": bool(t > thr), "ge": bool(t >= thr)})
    return {"scores": cases, "compare": checks}


def box_cases(amg):
    masks = []
    specs = [(9, 11, 1, 0.2, 1, 0.0), (9, 11, 2, 0.0, 1, 0.0), (9, 11, 3, 1.0, 1, 0.0),
             (30, 20, 4, 0.05, 4, 0.0), (30, 20, 5, 0.0, 1, 0.004), (1, 1, 6, 1.0, 1, 0.0),
             (50, 70, 7, 0.1, 8, 0.001), (17, 3, 8, 0.3, 2, 0.0)]
    for h, w, seed, dens, block, noise in specs:
        m = torch.from_numpy(hash_mask(h, w, seed, dens, block, noise))
        box = amg.batched_mask_to_box(m[None])[0]
        masks.append({"h": h, "w": w, "seed": seed, "density": dens, "block": block,
                      "noise": noise, "box": [int(v) for v in box]})
    edges = []
    crops = [([0, 0, 128, 96], 128, 96), ([40, 0, 128, 64], 128, 96),
             ([0, 32, 80, 96], 128, 96), ([24, 16, 104, 80], 128, 96),
             ([500, 300, 1200, 900], 2250, 1500)]
    for k, (crop, ow, oh) in enumerate(crops):
        cw, ch = crop[2] - crop[0], crop[3] - crop[1]
        v = hval(4 * 60, 100 + k).reshape(60, 4).astype(np.float64)
        for r in v:
            x0 = int(r[0] * cw)
            y0 = int(r[1] * ch)
            x1 = min(cw - 1, x0 + int(r[2] * cw))
            y1 = min(ch - 1, y0 + int(r[3] * ch))
            b = torch.tensor([[x0, y0, x1, y1]], dtype=torch.int64)
            near = bool(amg.is_box_near_crop_edge(b, crop, [0, 0, ow, oh])[0])
            edges.append({"crop": crop, "orig_w": ow, "orig_h": oh, "box": [x0, y0, x1, y1],
                          "near": near})
    # uncrop_points: float32 + int64 offset
    pts = torch.tensor([[0.5, 1e-3], [1234.567, 89.125], [16777215.0, 3.3]], dtype=torch.float32)
    up = amg.uncrop_points(pts, [7, 1000001, 0, 0])
    uncrop = {"points": [float(v) for v in pts.ravel()], "x0": 7, "y0": 1000001,
              "out": [float(v) for v in up.ravel()]}
    return {"masks": masks, "near_edge": edges, "uncrop_points": uncrop}


def sort_cases():
    cases = []
    specs = [  # n, seed, levels (0 = continuous), nan_every (0 = none), pattern
        (1, 1, 0, 0, "hash"), (5, 2, 2, 0, "hash"), (16, 3, 3, 0, "hash"), (17, 4, 3, 0, "hash"),
        (40, 5, 4, 0, "hash"), (100, 6, 1, 0, "hash"), (100, 7, 5, 7, "hash"),
        (257, 8, 10, 0, "hash"), (1000, 9, 30, 0, "hash"), (1001, 10, 2, 0, "hash"),
        (5000, 11, 50, 0, "hash"), (3000, 12, 0, 0, "hash"), (300, 13, 0, 0, "ascending"),
        (300, 14, 0, 0, "descending"), (300, 15, 6, 0, "organ"), (64, 16, 0, 3, "hash"),
    ]
    for n, seed, levels, nan_every, pattern in specs:
        keys = sort_keys(n, seed, levels, nan_every, pattern)
        order = torch.from_numpy(keys).sort(0, descending=True)[1].numpy()
        c = {"n": n, "seed": seed, "levels": levels, "nan_every": nan_every, "pattern": pattern}
        if n <= 300:
            c["order"] = order.tolist()
        c["digest"] = digest(order)
        cases.append(c)
    return cases


def sort_keys(n, seed, levels, nan_every, pattern):
    """amg_sort_keys: the keys of one sort case."""
    if pattern == "ascending":
        keys = np.arange(n, dtype=np.float32)
    elif pattern == "descending":
        keys = np.arange(n, 0, -1).astype(np.float32)
    elif pattern == "organ":
        i = np.arange(n)
        keys = np.minimum(i, n - 1 - i).astype(np.float32) % np.float32(levels)
    else:
        keys = hval(n, seed)
        if levels > 0:
            keys = np.floor(keys * np.float32(levels)).astype(np.float32)
    if nan_every:
        keys[::nan_every] = np.nan
    return keys.astype(np.float32)


def nms_cases():
    from torchvision.ops.boxes import batched_nms
    cases = []
    specs = [  # n, seed, extent, max_size, levels, thr
        (10, 1, 20, 10, 3, 0.5), (30, 2, 40, 20, 4, 0.7), (200, 3, 100, 40, 6, 0.7),
        (200, 4, 100, 40, 0, 0.3), (600, 5, 200, 60, 8, 0.5), (1000, 6, 300, 60, 3, 0.7),
        (1001, 7, 300, 60, 3, 0.7), (1500, 8, 300, 80, 5, 0.6), (2500, 9, 400, 60, 0, 0.7),
        (50, 10, 10, 3, 2, 0.0), (50, 11, 8, 2, 1, 1.0), (80, 12, 30, 1, 2, 0.5),
    ]
    for n, seed, extent, max_size, levels, thr in specs:
        boxes = hash_boxes(n, seed, extent, max_size)
        scores = hval(n, seed + 1000)
        if levels > 0:
            scores = (np.floor(scores * np.float32(levels)) / np.float32(levels)).astype(np.float32)
        keep = batched_nms(torch.from_numpy(boxes), torch.from_numpy(scores),
                           torch.zeros(n), thr).numpy()
        c = {"n": n, "seed": seed, "extent": extent, "max_size": max_size, "levels": levels,
             "thr": thr, "n_keep": int(len(keep)), "digest": digest(keep)}
        if len(keep) <= 400:
            c["keep"] = keep.tolist()
        cases.append(c)
    # explicit: IoU exactly float32(0.3) = 30/100 is > 0.3 in double (suppressed), and
    # zero-area boxes give NaN / 0 IoUs (never suppressed)
    explicit = []
    for boxes, scores, thr in (
            ([[0, 0, 10, 10], [0, 0, 10, 3]], [0.9, 0.8], 0.3),
            ([[0, 0, 10, 10], [0, 0, 10, 3]], [0.9, 0.8], 0.30000001192092896),
            ([[5, 5, 5, 5], [5, 5, 5, 5], [5, 5, 6, 6]], [0.5, 0.5, 0.4], 0.1),
            ([[0, 0, 4, 4], [0, 0, 4, 4], [1, 1, 5, 5]], [0.7, 0.7, 0.7], 0.2)):
        b = torch.tensor(boxes, dtype=torch.float32)
        s = torch.tensor(scores, dtype=torch.float32)
        keep = batched_nms(b, s, torch.zeros(len(boxes)), thr)
        explicit.append({"boxes": boxes, "scores": [f32(v) for v in scores], "thr": thr,
                         "keep": keep.tolist()})
    return {"hashed": cases, "explicit": explicit}


# --------------------------------------------------------------------------
# RLE: official encoder; COCO strings from coco_rle.py (a re-statement)
# --------------------------------------------------------------------------

def rle_cases(amg):
    cases = []
    specs = [(1, 1, 1, 1.0, 1, 0.0), (1, 1, 2, 0.0, 1, 0.0), (4, 3, 3, 0.5, 1, 0.0),
             (4, 3, 4, 1.0, 1, 0.0), (4, 3, 5, 0.0, 1, 0.0), (20, 30, 6, 0.3, 4, 0.01),
             (31, 17, 7, 0.5, 1, 0.0), (64, 48, 8, 0.1, 16, 0.002), (100, 150, 9, 0.4, 25, 0.0),
             (300, 200, 10, 0.3, 40, 0.0005)]
    for h, w, seed, dens, block, noise in specs:
        m = hash_mask(h, w, seed, dens, block, noise)
        rle = amg.mask_to_rle_pytorch(torch.from_numpy(m)[None])[0]
        assert rle["size"] == [h, w]
        assert (amg.rle_to_mask(rle) == m).all()
        counts = rle["counts"]
        c = {"h": h, "w": w, "seed": seed, "density": dens, "block": block, "noise": noise,
             "n_counts": len(counts), "area": int(amg.area_from_rle(rle)),
             "counts_digest": digest(counts), "coco": coco_string(counts)}
        if len(counts) <= 200:
            c["counts"] = counts
        cases.append(c)
    # uncrop_masks then mask_to_rle_pytorch (what _process_batch stores)
    uncrop = []
    for crop, oh, ow, seed in (([3, 2, 10, 9], 12, 14, 11), ([0, 5, 14, 12], 12, 14, 12),
                               ([0, 0, 14, 12], 12, 14, 13)):
        ch, cw = crop[3] - crop[1], crop[2] - crop[0]
        m = torch.from_numpy(hash_mask(ch, cw, seed, 0.5, 2, 0.0))[None]
        full = amg.uncrop_masks(m, crop, oh, ow)
        uncrop.append({"crop": crop, "orig_h": oh, "orig_w": ow, "seed": seed,
                       "counts": amg.mask_to_rle_pytorch(full)[0]["counts"]})
    return {"masks": rle_cases_sanity(cases), "uncrop": uncrop, "coco_vectors": coco_vectors()}


def rle_cases_sanity(cases):
    for c in cases:
        if "counts" in c:
            assert sum(c["counts"]) == c["h"] * c["w"]
    return cases


def coco_vectors():
    """Published (counts, string) pairs and real strings.  The pairs are the
    unit-test vectors of a TypeScript COCO-RLE port that cites maskApi.c's
    rleToString; the strings are pycocotools' own tests (ppwwyyxx/cocoapi
    tests/test_cases.py: testZeroLeadingRLE decodes; testInvalidRLECounts must
    be refused)."""
    pairs = [([0, 6, 1, 3], "061M"), ([0, 6, 1], "061"), ([0, 6, 1, 1], "061K"),
             ([0, 6, 1, 5], "061O"), ([0, 6, 1, 6], "0610"),
             ([0, 1, 1, 2, 1, 3, 1, 4, 1], "011101010"), ([0, 1024], "0PP1")]
    for counts, s in pairs:
        assert coco_string(counts) == s, (counts, s)
    zero_leading = (
        "000lg0Zb01O00001O00001O001O00001O00001O001O00001O01O2N3M3M3M2N3M3N2M3M2N1O1O1O1O2N1O1O1O2N1O1O101N1O1O1O2N1O1O1O2N3M2N1O2N1O2O0O2N1O1O2N1O2N1O2N1O2N1O2N1O2O0O2N1O3M2N1O2N2N2N2N2N1O2N2N2N2N1O2N2N2N2N2N1N3N2N00O1O1O1O100000000000000O100000000000000001O0000001O00001O0O5L7I5K4L4L3M2N2N2N1O2m]OoXOm`0Sg0j^OVYOTa0lf0c^O]YO[a0ef0\\^OdYOba0bg0N2N2N2N2N2N2N2N2N2N2N2N2N2N2N2N2N3M2M4M2N3M2N3M2N3M2N3M2N3M2N3M2N3M2N3M2M4M2N2N3M2M4M2N2N3M2M3N3M2N3M2M3N3M2N2N3L3N2N3M2N3L3N2N3M5J4M3M4L3M3L5L3M3M4L3L4\\EXTOd6jo0K6J5K6I4M1O1O1O1N2O1O1O001N2O00001O0O101O000O2O00001N101N101N2N101N101N101N2O0O2O0O2O0O2O1N101N2N2O1N2O1N2O1N101N2O1N2O1N2O0O2O1N2N2O1N2O0O2O1N2O1N2N2N1N4M2N2M4M2N3L3N2N3L3N3L3N2N3L3N2N3L3M4L3M3M4L3M5K5K5K6J5K5K6J7I7I7Ibijn0")
    invalid = (
        "jd`0=`o06J5L4M3L3N2N2N2N2N1O2N2N101N1O2O0O1O2N100O1O2N100O1O1O1O1O101N1O1O1O1O1O1O101N1O100O101O0O100000000000000001O00001O1O0O2O1N3N1N3N3L5Kh0XO6J4K5L5Id[o5N]dPJ7K4K4M3N2M3N2N1O2N100O2O0O1000O01000O101N1O1O2N2N2M3M3M4J7Inml5H[RSJ6L2N2N2N2O000000000000O2O1N2N2Mkm81SRG6L3L3N2O1N2N2O0O2O00001O0000000000O2O001N2O0O2N2N3M3L5JRjf6MPVYI8J4L3N3M2N1O2O1N101N1000000O10000001O000O101N101N1O2N2N2N3L4L7FWZ_50ne`J0000001O000000001O0000001O1O0N3M3N1O2N2N2O1N2O001N2`RO^O`k0c0[TOEak0;\\\\TOJbk07\\\\TOLck03[TO0dk01ZTO2dk0OYTO4gk0KXTO7gk0IXTO8ik0HUTO:kk0ETTO=lk0CRTO>Pl0@oSOb0Rl0\\\\OmSOe0Tl0[OjSOg0Ul0YOiSOi0Wl0XOgSOi0Yl0WOeSOk0[l0VOaSOn0kh0cNmYO")
    zl_counts = coco_decode(zero_leading)
    assert sum(zl_counts) == 1350 * 1080 and coco_string(zl_counts) == zero_leading
    bad = coco_decode(invalid)
    assert sum(c for c in bad) != 1024 * 1024
    return {"pairs": [{"counts": c, "string": s} for c, s in pairs],
            "zero_leading": {"h": 1350, "w": 1080, "string": zero_leading,
                             "n_counts": len(zl_counts), "area": sum(zl_counts[1::2]),
                             "counts_digest": digest(zl_counts)},
            "invalid": {"h": 1024, "w": 1024, "string": invalid}}


# --------------------------------------------------------------------------
# remove_small_regions (cv2)
# --------------------------------------------------------------------------

def cv2_order_check():
    """cv2 numbers 8-connected components by their first 2x2 block in block-
    raster order, not by their first pixel in raster order: island A starts at
    row 1 col 0, island B at row 0 col 3; A comes first."""
    import cv2
    m = np.zeros((4, 6), np.uint8)
    m[1, 0] = 1
    m[0, 3] = 1
    _, labels, _, _ = cv2.connectedComponentsWithStats(m, 8)
    assert labels[1, 0] == 1 and labels[0, 3] == 2, labels
    return m


def regions_cases(amg):
    cases = []
    specs = [  # h, w, seed, density, block, noise, area
        (20, 24, 1, 0.3, 3, 0.02, 5), (20, 24, 2, 0.7, 3, 0.02, 5), (31, 29, 3, 0.2, 2, 0.0, 3),
        (31, 29, 4, 0.5, 1, 0.0, 2), (64, 64, 5, 0.15, 4, 0.01, 20), (64, 64, 6, 0.6, 5, 0.0, 30),
        (9, 9, 7, 0.0, 1, 0.0, 100), (9, 9, 8, 1.0, 1, 0.0, 100), (7, 5, 9, 0.0, 1, 0.1, 3),
        (300, 400, 10, 0.2, 12, 0.001, 50), (257, 513, 11, 0.45, 9, 0.002, 80),
        (12, 12, 12, 0.0, 1, 0.03, 10), (1, 1, 13, 1.0, 1, 0.0, 1), (40, 3, 14, 0.3, 2, 0.0, 4),
    ]
    for h, w, seed, dens, block, noise, area in specs:
        m = hash_mask(h, w, seed, dens, block, noise)
        for mode in ("holes", "islands"):
            out, changed = amg.remove_small_regions(m, area, mode)
            out = np.asarray(out, dtype=bool)
            c = {"h": h, "w": w, "seed": seed, "density": dens, "block": block, "noise": noise,
                 "area": area, "mode": mode, "changed": bool(changed),
                 "n_set": int(out.sum()), "digest": digest(out.astype(np.int64))}
            cases.append(c)
    # ties among all-small islands: cv2's order picks the survivor
    m = cv2_order_check()
    out, changed = amg.remove_small_regions(m.astype(bool), 5, "islands")
    ties = {"h": 4, "w": 6, "set": [[1, 0], [0, 3]], "area": 5,
            "kept": [[int(y), int(x)] for y, x in zip(*np.nonzero(out))], "changed": bool(changed)}
    return {"hashed": cases, "tie": ties, "cv2_order": cv2_order_cases()}


def cv2_order_cases():
    """cv2's labels 1..n-1 as (area, left, top), for masks with many small
    components (sequential and, on the big ones, parallel labelling)."""
    import cv2
    out = []
    for h, w, seed, dens, block, noise in ((9, 13, 21, 0.0, 1, 0.3), (16, 16, 22, 0.2, 2, 0.05),
                                           (33, 47, 23, 0.1, 3, 0.08),
                                           (240, 320, 24, 0.05, 4, 0.05),
                                           (301, 199, 25, 0.3, 7, 0.03)):
        m = hash_mask(h, w, seed, dens, block, noise).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(m, 8)
        flat = [int(v) for r in stats[1:] for v in (r[cv2.CC_STAT_AREA], r[cv2.CC_STAT_LEFT],
                                                    r[cv2.CC_STAT_TOP])]
        c = {"h": h, "w": w, "seed": seed, "density": dens, "block": block, "noise": noise,
             "n_components": int(n - 1), "digest": digest(flat)}
        if n <= 60:
            c["stats"] = flat
        out.append(c)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sam2-src", help="official sam2 checkout (default: $SAM2_SRC)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    torch.set_num_threads(1)
    amg_env.import_official(args.sam2_src)
    from sam2.utils import amg
    import cv2
    import torchvision
    data = {
        "note": "made by tools/make_amg_testdata.py from the official sam2/utils/amg.py; "
                f"torch {torch.__version__}, torchvision {torchvision.__version__}, "
                f"numpy {np.__version__}, OpenCV {cv2.__version__}",
        "grid": grid_cases(amg),
        "crops": crop_cases(amg),
        "stability": stability_cases(amg),
        "box": box_cases(amg),
        "sort": sort_cases(),
        "nms": nms_cases(),
        "rle": rle_cases(amg),
        "regions": regions_cases(amg),
    }
    with open(args.out, "w") as f:
        json.dump(data, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
