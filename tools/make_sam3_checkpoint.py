#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Write a `sam3.pt`-like checkpoint (and a .safetensors) for loader tests:
the key layout of the released file, i.e. the state_dict of the model
build_sam3_video_model builds (Sam3VideoInferenceWithInstanceInteractivity):
`detector.*` (the image model's keys, plus the tracker neck
`detector.backbone.vision_backbone.sam2_convs.*`) and `tracker.*`, in that
model's state_dict order.

Values: the `detector.*` entries that the image model also has are exactly
the weights dump_sam3.py gives the image model for the same --set / --seed
(its /weights); the other entries (sam2_convs, tracker) are drawn by the same
rule from a second generator seeded with seed + 1, in key order.  Loading
the file the way build_sam3_image_model's _load_checkpoint does (keys with
"detector", prefix stripped, strict=False) gives the dump's weights.

  NAME.pt            torch.save(state_dict) -- a flat dict by default (the
                     release layout as far as it can be known without the
                     gated file, see tools/README.md); --nest-model writes
                     {"model": state_dict} instead (both load upstream)
  NAME.safetensors   written here (no safetensors package): u64 LE header
                     length, JSON header, data; complex64 RoPE tables as
                     dtype "C64" (safetensors >= 0.7), little-endian
                     (re, im) float32 pairs
  NAME.config.json   {"image": <image-model tree>, "video": <video-model tree>}

  --set / --set-new          as dump_sam3.py (image-model tree paths); applied
                             to the image tree and under `detector.` of the
                             video tree
  --tracker-set / --tracker-set-new   paths under the video tree's `tracker`
  --check-keys TSV           only build the video model (no weights drawn, no
                             files), and compare its keys, order, shapes and
                             dtypes with a key list
                             (a list of the released key names and shapes at full size)
"""

import argparse
import collections
import copy
import json
import os
import struct

import torch

import sam3_build

ST_NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
            torch.complex64: "C64"}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def tensor_bytes(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    if t.dtype == torch.complex64:
        return torch.view_as_real(t).numpy().astype("<f4").tobytes()
    a = t.numpy()
    return a.astype(a.dtype.newbyteorder("<")).tobytes()


def save_safetensors(state, path, metadata):
    header = {"__metadata__": metadata}
    blobs, offset = [], 0
    for k, t in state.items():
        b = tensor_bytes(t)
        header[k] = {"dtype": ST_NAMES[t.dtype], "shape": list(t.shape),
                     "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def check_keys(state, tsv):
    rows = [line.rstrip("\n").split("\t") for line in open(tsv)][1:]
    want = [(r[0], json.loads(r[1]), r[2]) for r in rows if r]
    got = [(k, list(v.shape), str(v.dtype).replace("torch.", "")) for k, v in state.items()]
    if [w[0] for w in want] == [g[0] for g in got]:
        order = "same order"
    elif sorted(w[0] for w in want) == sorted(g[0] for g in got):
        order = "same keys, other order"
    else:
        a, b = {w[0] for w in want}, {g[0] for g in got}
        raise SystemExit(f"--check-keys: {len(a - b)} keys missing (e.g. {sorted(a - b)[:3]}), "
                         f"{len(b - a)} extra (e.g. {sorted(b - a)[:3]})")
    shapes = {w[0]: (w[1], w[2]) for w in want}
    bad = [(k, s, d, shapes[k]) for k, s, d in got if (s, d) != shapes[k]]
    if bad:
        raise SystemExit(f"--check-keys: {len(bad)} shape/dtype mismatches, e.g. {bad[:3]}")
    return f"{len(got)} keys match {tsv} ({order}, shapes and dtypes equal)"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam3_build.add_model_args(p)
    p.add_argument("--tracker-set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--tracker-set-new", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--out-dir", default=".")
    p.add_argument("--name", required=True, help="file stem")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32",
                   help="cast the real tensors (complex tables stay complex64)")
    p.add_argument("--nest-model", action="store_true", help='save {"model": state_dict}')
    p.add_argument("--formats", default="pt,safetensors,config")
    p.add_argument("--check-keys", metavar="TSV")
    args = p.parse_args(argv)

    sam3_build.fp32_cpu_settings(args.threads)
    image_tree, source, bpe = sam3_build.build_tree_from_args(args)
    root, pkg, mb = sam3_build.import_sam3(args.sam3_src, args.ftfy_src)
    video_tree = sam3_build.video_tree(mb, bpe)
    for o in args.overrides:
        sam3_build.apply_override(video_tree, "detector." + o)
    for o in args.new_overrides:
        sam3_build.apply_override(video_tree, "detector." + o, allow_new=True)
    for o in args.tracker_set:
        sam3_build.apply_override(video_tree, "tracker." + o)
    for o in args.tracker_set_new:
        sam3_build.apply_override(video_tree, "tracker." + o, allow_new=True)
    # the loop resizes frames to its own image_size, which build_sam3_video_model
    # passes to the detector and the tracker alike: keep the three equal
    video_tree["image_size"] = video_tree["tracker"]["image_size"]

    if args.check_keys:
        video = sam3_build.instantiate(copy.deepcopy(video_tree), bpe)
        print(check_keys(video.state_dict(), args.check_keys))
        return

    image = sam3_build.instantiate(copy.deepcopy(image_tree), bpe)
    sam3_build.randomize_weights(image, args.seed)
    sam3_build.apply_nudges(image, args.nudge)
    video = sam3_build.instantiate(copy.deepcopy(video_tree), bpe)
    sam3_build.randomize_weights(video, args.seed + 1)

    img_state = image.state_dict()
    state = collections.OrderedDict()
    shared = 0
    for k, v in video.state_dict().items():
        ik = k[len("detector."):] if k.startswith("detector.") else None
        if ik is not None and ik in img_state:
            if img_state[ik].shape != v.shape or img_state[ik].dtype != v.dtype:
                raise SystemExit(f"{k}: video detector {tuple(v.shape)} vs image model "
                                 f"{tuple(img_state[ik].shape)}")
            v = img_state[ik]
            shared += 1
        t = v.detach().clone()
        if t.is_floating_point():
            t = t.to(DTYPES[args.dtype])
        state[k] = t
    missing = [k for k in img_state if "detector." + k not in state]
    if missing:
        raise SystemExit(f"image-model keys absent from the video detector: {missing[:5]}")
    print(f"{len(state)} tensors: {shared} detector entries = image-model weights "
          f"(seed {args.seed}), {len(state) - shared} more (seed {args.seed + 1}); "
          f"{sum(t.numel() for t in state.values())} elements")

    formats = set(args.formats.split(","))
    stem = os.path.join(args.out_dir, args.name)
    os.makedirs(args.out_dir, exist_ok=True)
    if "pt" in formats:
        torch.save({"model": state} if args.nest_model else state, stem + ".pt")
    if "safetensors" in formats:
        meta = {"format": "pt", "source": source, "seed": str(args.seed), "dtype": args.dtype}
        save_safetensors(state, stem + ".safetensors", meta)
    if "config" in formats:
        with open(stem + ".config.json", "w") as f:
            json.dump({"image": image_tree, "video": video_tree}, f)
    for ext in (".pt", ".safetensors", ".config.json"):
        if os.path.exists(stem + ext):
            print(f"{stem + ext}: {os.path.getsize(stem + ext)} bytes")


if __name__ == "__main__":
    main()
