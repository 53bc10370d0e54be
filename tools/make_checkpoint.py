#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Write a model's weights as checkpoint files for loader tests, built with
the same arguments as dump_sam2.py (sam2_build.py), so the float32 values are
bit-identical to the dump's /weights:

  NAME.pt           torch.save({"model": state_dict}, ...) like the official
                    checkpoints (zip format, torch 1.13 default)
  NAME.safetensors  written here (the safetensors package is not installed):
                    u64 LE header length, JSON header {key: {dtype, shape,
                    data_offsets}} plus "__metadata__", padded with spaces to
                    a multiple of 8, then the raw little-endian data
  NAME.config.json  the same config_json string as the dump's /model attr

  --dtype float16|bfloat16  store every tensor in that dtype (both files)
  --noncontig               .pt only: every other 2-D weight saved as the
                            transpose view .t() of a contiguous transposed
                            copy (non-trivial strides), and the 1-D biases of
                            sam_mask_decoder saved as views into one shared
                            storage at nonzero offsets; values are unchanged

Example:
  SAM2_SRC=/work/sam2src /usr/bin/python3 tools/make_checkpoint.py \
      --sam2-commit <commit> --config sam2.1_hiera_t --set ... --seed 3 \
      --out-dir fixtures/ckpt --name tiny --dtype bfloat16
"""

import argparse
import collections
import json
import os
import struct

import torch

import sam2_build

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
ST_NAMES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def convert(state, dtype):
    """Same keys, same order, tensors cast (a copy) to dtype; keeps the
    state_dict's _metadata so the pickle looks like model.state_dict()."""
    out = collections.OrderedDict((k, v.detach().to(dtype).clone()) for k, v in state.items())
    out._metadata = getattr(state, "_metadata", None)
    return out


def make_noncontiguous(state):
    """Rewrite some entries as strided views / shared-storage views with the
    same logical values.  Returns (state, transposed_keys, shared_keys)."""
    out = collections.OrderedDict(state)
    out._metadata = getattr(state, "_metadata", None)
    mats = [k for k, v in state.items() if v.dim() == 2 and min(v.shape) > 1]
    transposed = mats[::2]
    for k in transposed:
        out[k] = state[k].t().contiguous().t()      # strides (1, rows)
    shared = [k for k, v in state.items()
              if k.startswith("sam_mask_decoder.") and k.endswith(".bias") and v.dim() == 1]
    # 3 slack elements first, so every view has a nonzero storage_offset
    pool = torch.cat([state[shared[0]][:3]] + [state[k] for k in shared])
    offset = 3
    for k in shared:
        n = state[k].numel()
        out[k] = pool[offset:offset + n]
        offset += n
    for k in state:
        assert torch.equal(out[k], state[k]), k
    return out, transposed, shared


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:                   # numpy has no bfloat16
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam2_build.add_model_args(p)
    p.add_argument("--out-dir", default=".")
    p.add_argument("--name", required=True, help="file stem")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    p.add_argument("--noncontig", action="store_true", help="strided/shared views in the .pt")
    p.add_argument("--formats", default="pt,safetensors,config",
                   help="comma list of pt, safetensors, config")
    args = p.parse_args(argv)

    built = sam2_build.build_from_args(args)
    state = convert(built.model.state_dict(), DTYPES[args.dtype])
    formats = set(args.formats.split(","))
    stem = os.path.join(args.out_dir, args.name)
    os.makedirs(args.out_dir, exist_ok=True)
    if "pt" in formats:
        saved = state
        if args.noncontig:
            saved, tr, sh = make_noncontiguous(state)
            print(f"noncontig: {len(tr)} transposed views, {len(sh)} shared-storage views")
        torch.save({"model": saved}, stem + ".pt")
    if "safetensors" in formats:
        meta = {"format": "pt", "source": built.source, "seed": str(args.seed),
                "dtype": args.dtype}
        save_safetensors(state, stem + ".safetensors", meta)
    if "config" in formats:
        with open(stem + ".config.json", "w") as f:
            f.write(built.config_json)
    for ext in (".pt", ".safetensors", ".config.json"):
        if os.path.exists(stem + ext):
            print(f"{stem + ext}: {os.path.getsize(stem + ext)} bytes")


if __name__ == "__main__":
    main()
