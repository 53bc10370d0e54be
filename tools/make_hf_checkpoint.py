#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A transformers-format SAM 2 or SAM 3 checkpoint written by the converter's own code.

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

SAM 3 (--converter .../sam3/convert_sam3_to_hf.py, whose module imports the
`regex` package, python3-regex): the detector's tensors as
build_sam3_image_model's loader takes them ("detector." stripped, tracker.*
left out), renamed by the converter's own ORIGINAL_TO_CONVERTED_KEY_MAPPING
and convert_old_keys_to_new_keys, then the two steps convert_sam3_checkpoint
writes inline, restated here: position_embeddings[:, 1:, :] (the cls row
dropped) and text_projection.weight transposed; then its own split_qkv. The
RoPE tables (rotary_emb.rope_embeddings) are left out: the converter's note
lists them among the keys Sam3Model does not have, so save_pretrained never
writes them. --keys-out gives the renamed (pre-split) name of every detector
key (tests/test_sam3_hf.c).
"""
import argparse
import ast
import json
import re
import struct
import sys

import torch


def load_names(path, names, re_module):
    """The module-level assignments and functions `names` of the converter, by source."""
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src)
    keep = [n for n in tree.body
            if (isinstance(n, ast.Assign) and any(getattr(t, "id", "") in names for t in n.targets))
            or (isinstance(n, ast.FunctionDef) and n.name in names)]
    if len(keep) != len(names):
        sys.exit(f"{path}: not all of {', '.join(names)} found")
    ns = {"re": re_module, "torch": torch}
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), ns)
    return ns


def load_converter(path):
    """KEYS_TO_MODIFY_MAPPING and replace_keys of the SAM 2 converter, by source."""
    return load_names(path, ("KEYS_TO_MODIFY_MAPPING", "replace_keys"), re)["replace_keys"]


def convert_sam3(path, sd):
    """The SAM 3 converter on the detector of `sd`: (renamed state_dict after
    split_qkv, {official key: renamed key before split_qkv})."""
    import regex  # the converter's own regular expressions (python3-regex)

    ns = load_names(path, ("ORIGINAL_TO_CONVERTED_KEY_MAPPING", "convert_old_keys_to_new_keys", "split_qkv"), regex)
    det = {k.replace("detector.", ""): v for k, v in sd.items() if "detector" in k}  # _load_checkpoint's rule
    names = ns["convert_old_keys_to_new_keys"](list(det))
    new = {}
    for old, t in det.items():
        key = names.get(old, old)
        if key == "vision_encoder.backbone.embeddings.position_embeddings":  # convert_sam3_checkpoint, inline
            t = t[:, 1:, :]
        if key.endswith(".rotary_emb.rope_embeddings"):  # not a Sam3Model key: never saved
            continue
        new[key] = t
    if "text_encoder.text_projection.weight" in new:  # convert_sam3_checkpoint, inline
        new["text_encoder.text_projection.weight"] = new["text_encoder.text_projection.weight"].T
    return ns["split_qkv"](new), names


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
    ap.add_argument("--converter", required=True,
                    help="transformers' convert_sam2(_video)_to_hf.py or sam3/convert_sam3_to_hf.py")
    ap.add_argument("--keys-out", help="write the key map (official<TAB>transformers) here")
    ap.add_argument("checkpoint")
    ap.add_argument("out", nargs="?")
    a = ap.parse_args()
    sd = torch.load(a.checkpoint, map_location="cpu")
    sd = sd.get("model", sd)
    if "ORIGINAL_TO_CONVERTED_KEY_MAPPING" in open(a.converter, encoding="utf-8").read():  # SAM 3
        out, names = convert_sam3(a.converter, sd)
        if a.keys_out:
            with open(a.keys_out, "w") as f:
                f.writelines(f"{old}\t{new}\n" for old, new in names.items())
        if a.out:
            write_safetensors(a.out, out)
        return
    out = load_converter(a.converter)(dict(sd), None)
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
