#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Check the committed checkpoints against the dumps whose weights they hold:
  fixtures/ckpt/tiny_c_*  <->  fixtures/tiny_c_sam21_s160.h5
  fixtures/demo/tiny_d_demo.*  <->  fixtures/tiny_d_sam21_s192_demo.h5
.pt: strict key order and values (float32 bit-identical; float16/bfloat16
equal to the float32 values cast with round-to-nearest-even); the noncontig
.pt really holds strided and shared-storage views.  .safetensors: parsed with
a reader written here, same checks.  .config.json == the dump's config_json.
Usage: /usr/bin/python3 tools/check_checkpoints.py fixtures/
"""

import json
import os
import struct
import sys

import h5py
import numpy as np
import torch

ST_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0, "header not padded to 8"
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    body, out, end = data[8 + n:], {}, 0
    for k, info in header.items():
        lo, hi = info["data_offsets"]
        assert lo == end, f"{k}: gap or overlap"
        end = hi
        dt = ST_DTYPES[info["dtype"]]
        raw = torch.frombuffer(bytearray(body[lo:hi]), dtype=torch.uint8)
        out[k] = raw.view(dt).reshape(info["shape"])
    assert end == len(body), "trailing bytes"
    return out


def reference(dump):
    with h5py.File(dump, "r") as f:
        weights = {k: torch.from_numpy(f["weights"][k][:]) for k in f["weights"]}
        return weights, f["model"].attrs["config_json"]


def same_values(state, ref, dtype, what):
    assert set(state) == set(ref), f"{what}: key sets differ"
    for k, v in state.items():
        assert v.dtype == dtype, f"{what}: {k} is {v.dtype}"
        want = ref[k].to(dtype)
        assert v.shape == want.shape and torch.equal(v, want), f"{what}: {k} differs"


def check_pt(path, ref, dtype, model_keys):
    state = torch.load(path, map_location="cpu")["model"]
    assert list(state) == model_keys, f"{path}: key order differs from the model's"
    same_values(state, ref, dtype, path)
    return state


def check_set(directory, stem, dump, formats):
    ref, config_json = reference(dump)
    model_keys = list(ref)  # h5py lists alphabetically; order comes from the .pt
    dtype = TORCH_DTYPES[stem.rsplit("_", 1)[-1]] if stem.rsplit("_", 1)[-1] in TORCH_DTYPES \
        else torch.float32
    base = os.path.join(directory, stem)
    if "pt" in formats:
        state = torch.load(base + ".pt", map_location="cpu")["model"]
        model_keys = list(state)
        check_pt(base + ".pt", ref, dtype, model_keys)
    if "safetensors" in formats:
        st = read_safetensors(base + ".safetensors")
        assert list(st) == model_keys, "safetensors key order"
        same_values(st, ref, dtype, base + ".safetensors")
    if "config" in formats:
        with open(base + ".config.json") as f:
            assert f.read() == config_json, "config.json differs from the dump"
    return model_keys


def check_noncontig(path, dump, model_keys):
    ref, _ = reference(dump)
    state = check_pt(path, ref, torch.float32, model_keys)
    strided = [k for k, v in state.items() if not v.is_contiguous()]
    offset = [k for k, v in state.items() if v.storage_offset() > 0]
    shared = {v.storage().data_ptr() for k, v in state.items() if k in offset}
    assert strided and offset and len(shared) == 1, "noncontig .pt has no views"
    print(f"  {len(strided)} strided, {len(offset)} offset views in one storage")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "fixtures"
    dump_c = os.path.join(root, "tiny_c_sam21_s160.h5")
    dump_d = os.path.join(root, "tiny_d_sam21_s192_demo.h5")
    ck = os.path.join(root, "ckpt")
    keys = check_set(ck, "tiny_c_f32", dump_c, {"pt", "safetensors", "config"})
    for stem in ("tiny_c_f16", "tiny_c_bf16"):
        check_set(ck, stem, dump_c, {"pt", "safetensors", "config"})
    check_noncontig(os.path.join(ck, "tiny_c_f32_noncontig.pt"), dump_c, keys)
    check_set(os.path.join(root, "demo"), "tiny_d_demo", dump_d, {"pt", "config"})
    print("OK   checkpoints")


if __name__ == "__main__":
    main()
