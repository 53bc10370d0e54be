#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A transformers-format SAM 2 checkpoint written by the converter's own code.

Loads an official SAM 2 checkpoint (.pt: torch.save({"model": state_dict})),
renames its tensors with `replace_keys` of transformers' converter
(src/transformers/models/sam2_video/convert_sam2_video_to_hf.py, or
sam2/convert_sam2_to_hf.py, from a checkout given with --converter: only its
KEYS_TO_MODIFY_MAPPING and replace_keys are taken, by their source, and run
as written), and writes the result as the .safetensors transformers'
save_pretrained writes (the converter's names, each tensor in its dtype). transformers itself is
not needed (nor in Debian): the renaming is the converter's function, the
file format is safetensors'.

    /usr/bin/python3 tools/make_hf_checkpoint.py --converter TRANSFORMERS/src/transformers/models/sam2_video/convert_sam2_video_to_hf.py \\
        fixtures/ckpt/tiny_c_bf16.pt fixtures/ckpt/tiny_c_bf16_hf.safetensors

Also --keys-out FILE: the map official key -> transformers key (TSV) the
converter applied (every key but the four stacked point embeddings), for the
C test of samc's port of the map (tests/test_sam2_hf.c).
"""
import argparse
import ast
import json
import re
import struct
import sys

import torch


def load_converter(path):
    """KEYS_TO_MODIFY_MAPPING and replace_keys of the converter, by source."""
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src)
    keep = [n for n in tree.body
            if (isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "KEYS_TO_MODIFY_MAPPING" for t in n.targets))
            or (isinstance(n, ast.FunctionDef) and n.name == "replace_keys")]
    if len(keep) != 2:
        sys.exit(f"{path}: no KEYS_TO_MODIFY_MAPPING and replace_keys found")
    ns = {"re": re, "torch": torch}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), ns)
    return ns["replace_keys"]


DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def write_safetensors(path, tensors):
    """The safetensors layout: 8-byte header length, the JSON header, the data
    (each tensor in its own dtype, as save_pretrained keeps it)."""
    header, blobs, off = {}, [], 0
    for k, t in tensors.items():
        t = t.detach().contiguous()
        b = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[k] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--converter", required=True, help="transformers' convert_sam2(_video)_to_hf.py")
    ap.add_argument("--keys-out", help="write the key map (official<TAB>transformers) here")
    ap.add_argument("checkpoint")
    ap.add_argument("out", nargs="?")
    a = ap.parse_args()
    replace_keys = load_converter(a.converter)
    sd = torch.load(a.checkpoint, map_location="cpu")
    sd = sd.get("model", sd)
    out = replace_keys(dict(sd), None)
    if a.keys_out:  # which official tensor each new key holds (the converter passes them through)
        official = {id(t): k for k, t in sd.items()}
        with open(a.keys_out, "w") as f:
            for new, t in out.items():
                if id(t) in official and new != "shared_image_embedding.positional_embedding":  # its copy
                    f.write(f"{official[id(t)]}\t{new}\n")
    if a.out:
        write_safetensors(a.out, out)


if __name__ == "__main__":
    main()
