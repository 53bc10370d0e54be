#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check SAM 3 image-task dumps (task "sam3_image") against the "SAM 3"
section of PARITY_DUMP_FORMAT.md, with numpy only (no torch, no sam3):

  layout   root / model attrs (family, variant, config_json as a _target_
           tree, source, torch_version, seed, resolution, bpe_vocab_gz),
           /weights dtypes (float32; complex tables as view_as_real with
           torch_dtype = "complex64"), /inputs, /outputs shapes and dtypes;
  trace    6-digit names without gaps, module/call/class attrs, per-module
           call numbering, and the exact sequence of parity points the
           processor calls imply (set_image once; per prompt: text encoding
           if a text is set or "visual" at the first box without text, one
           detector run per set_text_prompt / add_geometric_prompt);
  numbers  @preprocess in/0 == image, out/0 feeds the vision backbone and is
           within one uint8 level of an independent numpy resize (float
           antialiased bilinear, rounded); @tokenize ids well formed and the
           text mask == (ids == 0); geometry prompt slots == the prompt's
           boxes so far; @postprocess inputs == the module outputs they come
           from, its outputs == an independent numpy post-processing
           (score = sigmoid * sigmoid, keep > threshold, cxcywh -> xyxy *
           (W, H, W, H), bilinear mask resize + sigmoid); /outputs/<k> ==
           prompt k's last @postprocess; RoPE freqs_cis == a numpy
           recomputation from config_json.
Usage: /usr/bin/python3 tools/check_sam3.py FILE.h5 [...]
(tools/check_dump.py dispatches sam3_image dumps here.)
       /usr/bin/python3 tools/check_sam3.py --checkpoint NAME.pt --against DUMP.h5
checks a make_sam3_checkpoint.py output: keys only detector.* / tracker.*,
NAME.safetensors bit-identical to NAME.pt (C64 tables included), and every
/weights entry of the dump == detector.<key> of the checkpoint.
"""

import gzip
import json
import sys

import h5py
import numpy as np

from check_dump import Failed, aa_bilinear_matrix, expect, plain_bilinear_matrix, str_attr

VB = "backbone.vision_backbone"
LB = "backbone.language_backbone"
SOT, EOT, VOCAB = 49406, 49407, 49408


def attr(obj, name):
    expect(name in obj.attrs, f"{obj.name}: attribute {name} missing")
    return obj.attrs[name]


def int_attr(obj, name):
    v = attr(obj, name)
    expect(isinstance(v, (np.integer, int)) and not isinstance(v, bool),
           f"{obj.name}@{name} is not an integer")
    return int(v)


def ds(group, name, dtype=None, shape=None):
    expect(name in group and isinstance(group[name], h5py.Dataset),
           f"{group.name}/{name} missing")
    d = group[name]
    if dtype is not None:
        expect(d.dtype == np.dtype(dtype), f"{d.name}: dtype {d.dtype}, expected {dtype}")
    if shape is not None:
        expect(len(d.shape) == len(shape) and all(
            s is None or s == t for s, t in zip(shape, d.shape)),
            f"{d.name}: shape {d.shape}, expected {shape}")
    return d[()]


def sigmoid32(x):
    x = x.astype(np.float32)
    return (np.float32(1) / (np.float32(1) + np.exp(-x))).astype(np.float32)


# --------------------------------------------------------------------------
# Model / weights
# --------------------------------------------------------------------------

def check_tree(node, path="root"):
    """Every dict with a _target_ is a module node; no path for the tokenizer."""
    if isinstance(node, dict):
        if "_target_" in node:
            expect(isinstance(node["_target_"], str) and "." in node["_target_"],
                   f"config_json {path}: bad _target_")
            if node["_target_"].endswith("SimpleTokenizer"):
                expect(set(node) == {"_target_"}, f"config_json {path}: tokenizer has arguments")
        for k, v in node.items():
            check_tree(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            check_tree(v, f"{path}.{i}")


def axial_cis(dim, end_x, end_y, theta, scale):
    """compute_axial_cis (vitdet.py) in numpy: float32 frequencies and
    positions, angles float32, cos/sin in float64 (compared at 1e-6)."""
    f32 = np.float32
    k = np.arange(0, dim, 4)[: dim // 4].astype(f32)
    freqs = (f32(1.0) / (f32(theta) ** (k / f32(dim)))).astype(f32)
    t = np.arange(end_x * end_y, dtype=f32)
    tx = (t % f32(end_x)).astype(f32) * f32(scale)
    ty = np.floor(t / f32(end_x)).astype(f32) * f32(scale)
    ax = np.outer(tx, freqs).astype(f32)
    ay = np.outer(ty, freqs).astype(f32)
    ang = np.concatenate([ax, ay], axis=1).astype(np.float64)
    return np.stack([np.cos(ang), np.sin(ang)], axis=-1)


def check_model_weights(f):
    expect(str_attr(f, "format") == "samc-parity-dump", "root format")
    expect(int_attr(f, "format_version") == 1, "format_version")
    m = f["model"]
    expect(str_attr(m, "family") == "sam3", "family")
    for a in ("variant", "source", "torch_version"):
        str_attr(m, a)
    int_attr(m, "seed")
    res = int_attr(m, "resolution")
    cfg = json.loads(str_attr(m, "config_json"))
    expect(cfg.get("_target_") == "sam3.model.sam3_image.Sam3Image", "config_json root _target_")
    check_tree(cfg)
    bpe = ds(m, "bpe_vocab_gz", np.uint8)
    lines = gzip.decompress(bpe.tobytes()).decode("utf-8").split("\n")
    expect(len(lines) >= 48895, f"bpe_vocab_gz: {len(lines)} lines")
    trunk = cfg["backbone"]["visual"]["trunk"]
    patch = trunk["patch_size"]
    expect(trunk["img_size"] // patch == res // patch,
           f"trunk img_size {trunk['img_size']} and resolution {res} give different grids")
    w = f["weights"]
    n_complex = 0
    for key, d in w.items():
        expect(isinstance(d, h5py.Dataset), f"/weights/{key} is not a dataset")
        expect(d.dtype == np.float32, f"/weights/{key}: dtype {d.dtype}")
        if "torch_dtype" in d.attrs:
            expect(str_attr(d, "torch_dtype") == "complex64" and d.shape[-1] == 2,
                   f"/weights/{key}: complex layout")
            n_complex += 1
    # RoPE tables recomputed from the config
    grid = trunk["img_size"] // patch
    heads, dim = trunk["num_heads"], trunk["embed_dim"]
    win = trunk.get("window_size", 14)
    glob = trunk.get("global_att_blocks", [2, 5, 8, 11])
    rope_err = 0.0
    if trunk.get("use_rope", False):
        for i in range(trunk["depth"]):
            key = f"{VB}.trunk.blocks.{i}.attn.freqs_cis"
            expect(key in w and "torch_dtype" in w[key].attrs, f"{key} missing or not complex")
            size = grid if i in glob else win
            pt = trunk.get("rope_pt_size") or win
            scale = pt / size if trunk.get("use_interp_rope", False) else 1.0
            ref = axial_cis(dim // heads, size, size, 10000.0, scale)
            got = w[key][()]
            expect(got.shape == ref.shape, f"{key}: shape {got.shape}, expected {ref.shape}")
            rope_err = max(rope_err, float(np.abs(got - ref).max()))
        expect(rope_err < 2e-6, f"RoPE tables vs numpy: {rope_err}")
    return cfg, res, n_complex, rope_err


# --------------------------------------------------------------------------
# Inputs / outputs
# --------------------------------------------------------------------------

def check_inputs(f):
    inp = f["inputs"]
    expect(str_attr(inp, "task") == "sam3_image", "task")
    thr = attr(inp, "confidence_threshold")
    expect(isinstance(thr, np.floating) and np.asarray(thr).dtype == np.float64,
           "confidence_threshold is not a float64 attribute")
    img = ds(inp, "image_u8", np.uint8)
    expect(img.ndim == 3 and img.shape[2] == 3, f"image_u8 shape {img.shape}")
    gp = inp["prompts"]
    keys = sorted(gp, key=int)
    expect(keys == [str(i) for i in range(len(keys))] and keys, "prompts not 0..K-1")
    prompts = []
    for k in keys:
        g = gp[k]
        text = str_attr(g, "text") if "text" in g.attrs else None
        boxes = ds(g, "box_cxcywh", np.float32, (None, 4))
        labels = ds(g, "box_labels", np.int32, (boxes.shape[0],))
        expect(set(labels.tolist()) <= {0, 1}, f"prompt {k}: labels {labels}")
        expect(text is not None or len(boxes) > 0, f"prompt {k}: neither text nor box")
        prompts.append({"text": text, "boxes": boxes, "labels": labels})
    return img, float(thr), prompts


# --------------------------------------------------------------------------
# Trace
# --------------------------------------------------------------------------

def expected_sequence(cfg, prompts):
    trunk = cfg["backbone"]["visual"]["trunk"]
    nconv = len(cfg["backbone"]["visual"]["scale_factors"])
    ntext = cfg["backbone"]["text"]["layers"]
    geo = cfg["input_geometry_encoder"]
    ngeo = geo["num_layers"]
    nenc = cfg["transformer"]["encoder"]["num_layers"]
    ndec = cfg["transformer"]["decoder"]["num_layers"]
    seq = ["@preprocess", f"{VB}.trunk.patch_embed"]
    seq += [f"{VB}.trunk.blocks.{i}" for i in range(trunk["depth"])]
    seq += [f"{VB}.trunk"] + [f"{VB}.convs.{i}" for i in range(nconv)] + [VB]
    text = (["@tokenize"] + [f"{LB}.encoder.transformer.resblocks.{i}" for i in range(ntext)]
            + [f"{LB}.encoder", LB])
    det = [f"geometry_encoder.encode.{i}" for i in range(ngeo)] + ["geometry_encoder"]
    det += [f"transformer.encoder.layers.{i}" for i in range(nenc)] + ["transformer.encoder"]
    det += [f"transformer.decoder.layers.{i}" for i in range(ndec)] + ["transformer.decoder"]
    det += ["dot_prod_scoring", "segmentation_head.pixel_decoder", "segmentation_head",
            "@postprocess"]
    runs = []   # per detector run: (prompt k, boxes so far, text used)
    for k, p in enumerate(prompts):
        if p["text"] is not None:
            seq += text + det
            runs.append((k, 0, p["text"]))
        for i in range(len(p["boxes"])):
            if i == 0 and p["text"] is None:
                seq += text
            seq += det
            runs.append((k, i + 1, p["text"] if p["text"] is not None else "visual"))
    return seq, runs


def check_trace(f, cfg, prompts):
    tr = f["trace"]
    names = sorted(tr)
    expect(names == [f"{i:06d}" for i in range(len(names))], "trace names not 000000..n-1")
    recs, counts = [], {}
    for n in names:
        g = tr[n]
        mod, call, cls = str_attr(g, "module"), int_attr(g, "call"), str_attr(g, "class")
        expect("in" in g and "out" in g, f"trace/{n}: in/out groups missing")
        expect(call == counts.get(mod, 0), f"trace/{n} {mod}: call {call}, expected "
               f"{counts.get(mod, 0)}")
        counts[mod] = call + 1
        recs.append((mod, call, cls, g))
    seq, runs = expected_sequence(cfg, prompts)
    points = set(seq)
    recs = [r for r in recs if r[0] in points]   # a --full dump records more; ignored
    got = [r[0] for r in recs]
    if got != seq:
        i = next((j for j, (a, b) in enumerate(zip(got, seq)) if a != b), min(len(got), len(seq)))
        raise Failed(f"trace sequence differs at record {i}: "
                     f"{got[i] if i < len(got) else 'END'} vs expected "
                     f"{seq[i] if i < len(seq) else 'END'}")
    return recs, runs


def only(recs, module):
    return [r[3] for r in recs if r[0] == module]


def reference_preprocess(image, r):
    """v2 pipeline on the float path: antialiased bilinear resize in float,
    round to uint8, /255, (x - 0.5) / 0.5.  Returns the rounded uint8 image
    (to compare at one level) as float64 [3, r, r]."""
    h, w = image.shape[:2]
    x = image.astype(np.float64).transpose(2, 0, 1)
    if (h, w) != (r, r):
        my = aa_bilinear_matrix(h, r)
        mx = aa_bilinear_matrix(w, r)
        x = np.round(np.matmul(np.matmul(my, x), mx.T))
    return x


def check_numbers(f, recs, runs, cfg, res, img, thr, prompts):
    h, w = img.shape[:2]
    msgs = []
    # ---- preprocess and vision
    pre = only(recs, "@preprocess")[0]
    expect(np.array_equal(pre["in/0"][()], img), "@preprocess in/0 != image_u8")
    x = pre["out/0"][()]
    expect(x.shape == (1, 3, res, res) and x.dtype == np.float32, f"@preprocess out/0 {x.shape}")
    for m in (VB, f"{VB}.trunk", f"{VB}.trunk.patch_embed"):
        expect(np.array_equal(only(recs, m)[0]["in/0"][()], x), f"{m} in/0 != @preprocess out/0")
    ref_u8 = reference_preprocess(img, res)
    got_u8 = (x[0].astype(np.float64) * 0.5 + 0.5) * 255.0
    expect(np.abs(got_u8 - np.round(got_u8)).max() < 1e-3, "@preprocess out/0 is not k/255 normalised")
    diff = np.abs(np.round(got_u8) - ref_u8)
    expect(diff.max() <= 1, f"@preprocess vs numpy resize: {diff.max()} levels")
    msgs.append(f"preprocess: {int((diff > 0).sum())} of {diff.size} values 1 level off numpy")
    vb = only(recs, VB)[0]
    nconv = len(cfg["backbone"]["visual"]["scale_factors"])
    for i in range(nconv):
        expect(np.array_equal(vb[f"out/0.{i}"][()], only(recs, f"{VB}.convs.{i}")[0]["out/0"][()]),
               f"{VB} out/0.{i} != convs.{i} out/0")
    grid = res // cfg["backbone"]["visual"]["trunk"]["patch_size"]
    # ---- text encodings
    toks = only(recs, "@tokenize")
    texts = [t for k, n, t in runs if n <= 1 and (n == 0 or prompts[k]["text"] is None)]
    expect(len(toks) == len(texts), f"{len(toks)} @tokenize records for {len(texts)} encodings")
    for i, (g, text) in enumerate(zip(toks, texts)):
        expect(str_attr(g["in"], "0") == text, f"@tokenize {i}: text {g['in'].attrs['0']!r}")
        ids = ds(g["out"], "0", np.int64)
        L = int_attr(g["in"], "context_length")
        expect(ids.shape == (1, L), f"@tokenize {i}: shape {ids.shape}")
        ids = ids[0]
        expect(ids[0] == SOT and EOT in ids.tolist() and ids.max() < VOCAB and ids.min() >= 0,
               f"@tokenize {i}: ids {ids.tolist()}")
        e = ids.tolist().index(EOT)
        expect(not ids[e + 1:].any(), f"@tokenize {i}: non-zero after EOT")
        enc = only(recs, f"{LB}.encoder")[i]
        expect(np.array_equal(enc["in/0"][()], ids[None]), f"{LB}.encoder {i} in/0 != ids")
        lb = only(recs, LB)[i]
        mask = ds(lb["out"], "0", np.int32)
        expect(np.array_equal(mask[0], (ids == 0).astype(np.int32)), f"{LB} {i}: mask != (ids == 0)")
    # ---- detector runs
    geos, posts = only(recs, "geometry_encoder"), only(recs, "@postprocess")
    decs, scos = only(recs, "transformer.decoder"), only(recs, "dot_prod_scoring")
    segs = only(recs, "segmentation_head")
    Q = cfg["transformer"]["decoder"]["num_queries"]
    mh = 4 * grid
    my = plain_bilinear_matrix(mh, h, np.float32(mh) / np.float32(h))
    mx = plain_bilinear_matrix(mh, w, np.float32(mh) / np.float32(w))
    mask_err = score_err = box_err = 0.0
    min_margin = np.inf
    last = {}
    for j, (k, nb, text) in enumerate(runs):
        p = prompts[k]
        g = geos[j]
        be = ds(g["in"], "geo_prompt.box_embeddings", np.float32, (nb, 1, 4))
        expect(np.array_equal(be[:, 0], p["boxes"][:nb]), f"run {j}: box_embeddings != prompt boxes")
        bl = g["in/geo_prompt.box_labels"][()]
        expect(bl.shape == (nb, 1) and np.array_equal(bl[:, 0], p["labels"][:nb]),
               f"run {j}: box_labels")
        bm = ds(g["in"], "geo_prompt.box_mask", None, (1, nb))
        expect(bm.dtype == np.int32 and not bm.any(), f"run {j}: box_mask")
        post = posts[j]
        pl = ds(post["in"], "pred_logits", np.float32, (1, Q, 1))
        pb = ds(post["in"], "pred_boxes", np.float32, (1, Q, 4))
        pm = ds(post["in"], "pred_masks", np.float32, (1, Q, mh, mh))
        pp = ds(post["in"], "presence_logit_dec", np.float32, (1, 1))
        expect(int_attr(post["in"], "original_height") == h and
               int_attr(post["in"], "original_width") == w, f"run {j}: original size")
        expect(float(attr(post["in"], "confidence_threshold")) == thr, f"run {j}: threshold")
        expect(np.array_equal(pl, scos[j]["out/0"][()][-1]), f"run {j}: pred_logits != scoring[-1]")
        expect(np.array_equal(pm, segs[j]["out/pred_masks"][()]), f"run {j}: pred_masks != seg head")
        expect(np.array_equal(pp.reshape(-1), decs[j]["out/2"][()][-1].reshape(-1)),
               f"run {j}: presence != decoder out/2[-1]")
        prob = (sigmoid32(pl) * sigmoid32(pp).reshape(1, 1, 1))[0, :, 0]
        t32 = np.float32(thr)
        min_margin = min(min_margin, float(np.abs(prob.astype(np.float64) - t32).min() / t32))
        keep = prob > t32
        sc = ds(post["out"], "scores", np.float32, (int(keep.sum()),))
        score_err = max(score_err, float(np.abs(sc - prob[keep]).max(initial=0)))
        b = pb[0][keep].astype(np.float64)
        xyxy = np.stack([b[:, 0] - 0.5 * b[:, 2], b[:, 1] - 0.5 * b[:, 3],
                         b[:, 0] + 0.5 * b[:, 2], b[:, 1] + 0.5 * b[:, 3]], 1) * [w, h, w, h]
        bx = ds(post["out"], "boxes", np.float32, (int(keep.sum()), 4))
        box_err = max(box_err, float(np.abs(bx - xyxy).max(initial=0)) / max(w, h))
        ms = ds(post["out"], "masks", np.float32, (int(keep.sum()), 1, h, w))
        if keep.any():
            lo = np.matmul(np.matmul(my, pm[0][keep].astype(np.float64)), mx.T)
            ref = 1.0 / (1.0 + np.exp(-lo))
            mask_err = max(mask_err, float(np.abs(ms[:, 0] - ref).max()))
        last[k] = (post, pl, pb, pm, pp)
    expect(score_err < 1e-6, f"@postprocess scores vs numpy: {score_err}")
    expect(box_err < 1e-6, f"@postprocess boxes vs numpy: {box_err}")
    expect(mask_err < 1e-5, f"@postprocess masks vs numpy: {mask_err}")
    # ---- /outputs == last call of each prompt
    out = f["outputs"]
    expect(sorted(out, key=int) == [str(k) for k in range(len(prompts))], "/outputs keys")
    for k, (post, pl, pb, pm, pp) in last.items():
        g = out[str(k)]
        M = post["out/scores"].shape[0]
        expect(np.array_equal(ds(g, "scores", np.float32, (M,)), post["out/scores"][()]),
               f"outputs/{k}/scores")
        expect(np.array_equal(ds(g, "boxes", np.float32, (M, 4)), post["out/boxes"][()]),
               f"outputs/{k}/boxes")
        expect(np.array_equal(ds(g, "masks", np.float32, (M, h, w)), post["out/masks"][()][:, 0]),
               f"outputs/{k}/masks")
        expect(np.array_equal(ds(g, "pred_logits", np.float32, (Q,)), pl[0, :, 0]),
               f"outputs/{k}/pred_logits")
        expect(np.array_equal(ds(g, "pred_boxes", np.float32, (Q, 4)), pb[0]),
               f"outputs/{k}/pred_boxes")
        expect(np.array_equal(ds(g, "presence_logit", np.float32, (1,)), pp.reshape(1)),
               f"outputs/{k}/presence_logit")
        expect(np.array_equal(ds(g, "pred_masks", np.float32, (Q, mh, mh)), pm[0]),
               f"outputs/{k}/pred_masks")
    msgs.append(f"postprocess vs numpy: scores {score_err:.1e}, boxes {box_err:.1e}, masks "
                f"{mask_err:.1e}; min score margin {min_margin:.2e} (relative)")
    return msgs, min_margin


def check_sam3_file(path):
    with h5py.File(path, "r") as f:
        cfg, res, n_complex, rope_err = check_model_weights(f)
        img, thr, prompts = check_inputs(f)
        recs, runs = check_trace(f, cfg, prompts)
        msgs, _ = check_numbers(f, recs, runs, cfg, res, img, thr, prompts)
        return (f"{len(f['trace'])} trace records ({len(recs)} parity points), {len(prompts)} prompts, {len(runs)} detector runs, "
                f"RoPE vs numpy {rope_err:.1e} ({n_complex} tables); " + "; ".join(msgs))


def read_safetensors(path):
    import struct
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(n))
        base = 8 + n
        data = fh.read()
    kinds = {"F32": "<f4", "F16": "<f2", "C64": "<c8", "I64": "<i8", "I32": "<i4"}
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        if v["dtype"] == "BF16":
            raw = np.frombuffer(data[a:b], "<u2").astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[a:b], kinds[v["dtype"]])
        out[k] = arr.reshape(v["shape"])
    return header, out


def check_checkpoint(pt, dump):
    import os
    import torch
    ck = torch.load(pt, map_location="cpu", weights_only=True)
    nested = isinstance(ck, dict) and "model" in ck and isinstance(ck["model"], dict)
    sd = ck["model"] if nested else ck
    bad = [k for k in sd if not (k.startswith("detector.") or k.startswith("tracker."))]
    expect(not bad, f"{pt}: keys outside detector./tracker.: {bad[:3]}")

    def arr(t):
        if t.is_complex():
            return t.numpy()
        if t.dtype == torch.bfloat16:
            return t.float().numpy()
        return t.numpy()

    st = os.path.splitext(pt)[0] + ".safetensors"
    if os.path.exists(st):
        header, tensors = read_safetensors(st)
        expect(list(tensors) == list(sd), "safetensors keys / order differ from the .pt")
        for k, t in sd.items():
            a = arr(t)
            expect(tensors[k].shape == a.shape and np.array_equal(tensors[k].astype(a.dtype), a),
                   f"safetensors {k} != .pt")
    with h5py.File(dump, "r") as f:
        w = f["weights"]
        for k, d in w.items():
            key = "detector." + k
            expect(key in sd, f"{key} missing from the checkpoint")
            ref = d[()]
            got = arr(sd[key])
            if got.dtype.kind == "c":
                got = np.stack([got.real, got.imag], -1)
            expect(got.shape == ref.shape and np.array_equal(got.astype(np.float32), ref),
                   f"{key} != {dump}/weights/{k}")
        n = len(w)
    layout = '{"model": state_dict}' if nested else "flat state_dict"
    return (f"{len(sd)} tensors ({layout}), "
            f"{sum(k.startswith('tracker.') for k in sd)} tracker.*; safetensors identical; "
            f"{n} detector.* == {dump} /weights")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--checkpoint" and sys.argv[3] == "--against":
        try:
            print(f"OK   {sys.argv[2]}: {check_checkpoint(sys.argv[2], sys.argv[4])}")
        except Failed as e:
            print(f"FAIL {sys.argv[2]}: {e}")
            sys.exit(1)
        return
    bad = 0
    for path in sys.argv[1:]:
        try:
            print(f"OK   {path}: {check_sam3_file(path)}")
        except Failed as e:
            bad += 1
            print(f"FAIL {path}: {e}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
