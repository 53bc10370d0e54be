#!/usr/bin/python3
"""Check image-task parity dumps against PARITY_DUMP_FORMAT.md (version 1)
and for internal consistency:
  - root, /model, /weights, /inputs, /outputs layout, dtypes and shapes;
  - /trace: 6-digit names 0..n-1 without gaps, attrs module/call/class,
    per-module call counts 0,1,2,... in completion order, and the exact
    parity-point sequence of the image task;
  - numbers: @preprocess in/0 == image; its out/0 == image_encoder in/0 and
    == an independent float64 numpy antialiased-bilinear + normalize (1e-5);
    prompt-encoder points == prompts scaled to S (box corners first);
    sam_mask_decoder out/0 clamped == low_res_masks, out/1 == iou_predictions;
    @postprocess in/0 == decoder out/0, in/1.* == (H, W), out/0[0] == masks.
Usage: /usr/bin/python3 tools/check_dump.py FILE.h5 [...]
"""

import json
import sys

import h5py
import numpy as np


class Failed(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failed(msg)


def str_attr(obj, name):
    v = obj.attrs[name]
    expect(isinstance(v, str), f"{obj.name}@{name} is not a string")
    tid = obj.attrs.get_id(name).get_type()
    expect(tid.is_variable_str() and tid.get_cset() == h5py.h5t.CSET_UTF8,
           f"{obj.name}@{name} is not a variable-length UTF-8 string")
    return v


# --------------------------------------------------------------------------
# Independent reference of the image predictor's preprocessing
# --------------------------------------------------------------------------

def aa_bilinear_matrix(n_in, n_out):
    """Weights of torch's antialiased bilinear resize along one axis
    (align_corners=False, downsampling): support = scale, triangle filter
    stretched by the scale, taps normalised to sum 1.  Like torch for float
    input, scale, centre, tap weights and their sum are float32 (C++ mixes in
    doubles where the source does); without this the reference is off by
    ~2e-5 at non-integer scales."""
    f32 = np.float32
    scale = f32(n_in) / f32(n_out)
    if scale <= 1.0:
        return plain_bilinear_matrix(n_in, n_out, scale)
    support = f32(scale)
    invscale = f32(1.0 / float(scale))
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = f32(float(scale) * (i + 0.5))
        lo = max(int(float(center - support) + 0.5), 0)
        hi = min(int(float(center + support) + 0.5), n_in)
        w = []
        for j in range(lo, hi):
            t = abs(f32((float(f32(j) - center) + 0.5) * float(invscale)))
            w.append(f32(1.0 - t) if t < 1.0 else f32(0.0))
        total = f32(0.0)
        for x in w:
            total = f32(total + x)
        m[i, lo:hi] = [float(x / total) for x in w]
    return m


def plain_bilinear_matrix(n_in, n_out, scale):
    """Upsampling (antialias has no effect): src = (i+0.5)*scale - 0.5,
    clamped at 0, upper neighbour clamped to n_in-1; float32 as torch."""
    f32 = np.float32
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        src = max(f32(scale * f32(i + 0.5) - f32(0.5)), f32(0.0))
        i0 = int(src)
        i1 = min(i0 + 1, n_in - 1)
        lam = f32(src - f32(i0))
        m[i, i0] += float(f32(1.0) - lam)
        m[i, i1] += float(lam)
    return m


def reference_preprocess(image, s):
    x = image.astype(np.float64).transpose(2, 0, 1) / 255.0
    if x.shape[1:] != (s, s):
        my, mx = aa_bilinear_matrix(x.shape[1], s), aa_bilinear_matrix(x.shape[2], s)
        x = np.matmul(np.matmul(my, x), mx.T)  # rows, then columns
    mean = np.array([0.485, 0.456, 0.406])[:, None, None]
    std = np.array([0.229, 0.224, 0.225])[:, None, None]
    return ((x - mean) / std)[None]


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------

def check_root_model_weights(f):
    expect(str_attr(f, "format") == "samc-parity-dump", "format attr")
    expect(int(f.attrs["format_version"]) == 1, "format_version")
    m = f["model"]
    for a in ("family", "variant", "config_json", "source", "torch_version"):
        str_attr(m, a)
    expect(m.attrs["family"] == "sam2", "family")
    cfg = json.loads(m.attrs["config_json"])
    expect("_target_" in cfg, "config_json keeps _target_")
    int(m.attrs["seed"])
    for k, d in f["weights"].items():
        expect(d.dtype == np.float32, f"weight {k} dtype {d.dtype}")
    return cfg


def check_inputs_outputs(f, s):
    inp = f["inputs"]
    expect(str_attr(inp, "task") == "image", "task")
    img = inp["image_u8"]
    expect(img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3, "image_u8")
    h, w = img.shape[:2]
    keys = sorted(inp["prompts"].keys(), key=int)
    expect(keys == [str(i) for i in range(len(keys))], "prompt numbering")
    expect(sorted(f["outputs"].keys(), key=int) == keys, "outputs match prompts")
    for k in keys:
        p = inp["prompts"][k]
        pc, pl = p["point_coords"], p["point_labels"]
        expect(pc.dtype == np.float32 and pc.ndim == 2 and pc.shape[1] == 2, "point_coords")
        expect(pl.dtype == np.int32 and (pl.shape == (pc.shape[0],) or
                                         (pc.shape[0] == 0 and pl.shape == (0,))), "labels")
        if "box" in p:
            expect(p["box"].shape == (4,) and p["box"].dtype == np.float32, "box")
        if "mask_input" in p:
            expect(p["mask_input"].shape == (1, s // 4, s // 4), "mask_input shape")
        c = 3 if int(p.attrs["multimask_output"]) else 1
        o = f["outputs"][k]
        expect(o["masks"].shape == (c, h, w), f"outputs/{k}/masks {o['masks'].shape}")
        expect(o["iou_predictions"].shape == (c,), "iou shape")
        expect(o["low_res_masks"].shape == (c, s // 4, s // 4), "low_res shape")
        for n in ("masks", "iou_predictions", "low_res_masks"):
            expect(o[n].dtype == np.float32, f"{n} dtype")
    return keys, (h, w)


def expected_sequence(cfg, num_prompts):
    stages = cfg["image_encoder"]["trunk"].get("stages", [2, 3, 16, 3])
    seq = (["@preprocess", "image_encoder.trunk.patch_embed"]
           + [f"image_encoder.trunk.blocks.{i}" for i in range(sum(stages))]
           + ["image_encoder.trunk", "image_encoder.neck", "image_encoder"])
    per_prompt = (["sam_prompt_encoder"]
                  + [f"sam_mask_decoder.transformer.layers.{i}" for i in range(2)]
                  + ["sam_mask_decoder.transformer", "sam_mask_decoder", "@postprocess"])
    return seq + per_prompt * num_prompts


def check_trace(f, cfg, num_prompts):
    tr = f["trace"]
    names = sorted(tr.keys())
    expect(names == [f"{i:06d}" for i in range(len(names))], "trace numbering has gaps")
    counts, seq, by_module = {}, [], {}
    for n in names:
        g = tr[n]
        mod, cls = str_attr(g, "module"), str_attr(g, "class")
        call = int(g.attrs["call"])
        expect(call == counts.get(mod, 0), f"{n} {mod}: call {call}, expected {counts.get(mod, 0)}")
        counts[mod] = call + 1
        expect("in" in g and "out" in g, f"{n}: in/out groups")
        seq.append(mod)
        by_module.setdefault(mod, []).append(g)
    wanted = expected_sequence(cfg, num_prompts)
    got = [m for m in seq if m in set(wanted)]
    expect(got == wanted, "parity-point sequence differs:\n" + "\n".join(
        f"  {a} | {b}" for a, b in zip(got, wanted) if a != b))
    return by_module


# --------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------

def check_numbers(f, by_module, keys, hw, s):
    img = f["inputs/image_u8"][:]
    pre = by_module["@preprocess"][0]
    expect(np.array_equal(pre["in/0"][:], img), "@preprocess in/0 != image")
    x = pre["out/0"][:]
    expect(x.shape == (1, 3, s, s), "@preprocess out/0 shape")
    expect(np.array_equal(by_module["image_encoder"][0]["in/0"][:], x),
           "image_encoder in/0 != @preprocess out/0")
    ref = reference_preprocess(img, s)
    err = float(np.abs(x - ref).max())
    expect(err < 1e-5, f"preprocess vs numpy float64 reference: {err}")
    h, w = hw
    for i, k in enumerate(keys):
        p, o = f["inputs/prompts"][k], f["outputs"][k]
        pe, dec, post = (by_module[m][i] for m in
                         ("sam_prompt_encoder", "sam_mask_decoder", "@postprocess"))
        pts = [p["box"][:].reshape(2, 2)] if "box" in p else []
        pts.append(p["point_coords"][:])
        pts = np.concatenate(pts) * np.array([s / w, s / h], np.float32)
        if len(pts):
            expect(np.allclose(pe["in/points.0"][0], pts, rtol=1e-6, atol=1e-4),
                   f"prompt {k}: prompt-encoder points")
        if "mask_input" in p:
            expect(np.array_equal(pe["in/masks"][:], p["mask_input"][:][None]), "mask_input")
        low = dec["out/0"][:]
        expect(np.array_equal(np.clip(low[0], -32, 32), o["low_res_masks"][:]),
               f"prompt {k}: decoder out/0 vs low_res_masks")
        expect(np.array_equal(dec["out/1"][0], o["iou_predictions"][:]), f"prompt {k}: iou")
        expect(int(dec["in"].attrs["multimask_output"]) == int(p.attrs["multimask_output"]),
               f"prompt {k}: multimask attr")
        expect(np.array_equal(post["in/0"][:], low), f"prompt {k}: postprocess in/0")
        expect((int(post["in"].attrs["1.0"]), int(post["in"].attrs["1.1"])) == (h, w),
               f"prompt {k}: postprocess orig_hw")
        expect(np.array_equal(post["out/0"][0], o["masks"][:]), f"prompt {k}: masks")
    return err


def check_file(path):
    with h5py.File(path, "r") as f:
        cfg = check_root_model_weights(f)
        s = int(cfg["image_size"])
        keys, hw = check_inputs_outputs(f, s)
        by_module = check_trace(f, cfg, len(keys))
        err = check_numbers(f, by_module, keys, hw, s)
        return len(f["trace"]), err


def main():
    bad = 0
    for path in sys.argv[1:]:
        try:
            n, err = check_file(path)
            print(f"OK   {path}: {n} trace records, preprocess vs numpy {err:.2e}")
        except Failed as e:
            bad += 1
            print(f"FAIL {path}: {e}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
