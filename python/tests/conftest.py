# SPDX-License-Identifier: Apache-2.0
"""Shared fixtures of the Python tests: the repository's committed dumps,
read with h5py (every file closed before samc opens it: HDF5 refuses a second
open of a file with other access settings), and the tolerances of the parity
harness (core/runtime/impl_table.c: fast 1e-4, ref 1e-5, relative to the
largest recorded magnitude, as PARITY_DUMP_FORMAT.md's comparison)."""
import atexit
import os
import pathlib
import shutil

import h5py
import numpy as np
import pytest

REPO = pathlib.Path(os.environ.get("SAMC_REPO", pathlib.Path(__file__).resolve().parents[2]))
FIXTURES = REPO / "fixtures"
TOL = {"fast": 1e-4, "ref": 1e-5}

IMAGE_DUMPS = sorted(FIXTURES.glob("tiny_*_s*.h5"))
VIDEO_DUMPS = sorted((FIXTURES / "video").glob("tiny_v*.h5"))
AMG_DUMPS = sorted((FIXTURES / "amg").glob("amg_*.h5"))
SAM3_DUMPS = sorted((FIXTURES / "sam3").glob("tiny_s*.h5"))


def _group(g):
    return {k: g[k][()] for k in g.keys() if isinstance(g[k], h5py.Dataset)}


def _attrs(g):
    out = {}
    for k, v in g.attrs.items():
        if k.startswith("note"):
            continue
        if isinstance(v, h5py.Empty):
            v = None
        elif isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def read_dump(path):
    """A dump's /inputs and /outputs as plain numpy values (the file closed)."""
    with h5py.File(path, "r") as f:
        inputs = f["inputs"]
        d = {"inputs": _attrs(inputs), "arrays": _group(inputs), "prompts": [], "outputs": {}}
        if "prompts" in inputs:
            for k in sorted(inputs["prompts"].keys(), key=int):
                g = inputs["prompts"][k]
                d["prompts"].append((_group(g), _attrs(g)))
        if "point_grids" in inputs:
            d["point_grids"] = [inputs["point_grids"][k][()] for k in sorted(inputs["point_grids"].keys(), key=int)]
        out = f["outputs"]
        if d["inputs"].get("task") == "video":
            frames = out["frames"]
            d["outputs"] = {int(t): {int(o): frames[t][o]["mask_logits"][()] for o in frames[t].keys()}
                            for t in frames.keys()}
        elif d["inputs"].get("task") == "amg":
            d["outputs"] = _group(out)
            d["outputs"]["num_masks"] = int(out.attrs["num_masks"])
        else:
            d["outputs"] = {int(k): _group(out[k]) for k in out.keys()}
    return d


def rel(a, ref):
    """max |a - ref| / max |ref| (the harness's `rel`)."""
    a, ref = np.asarray(a, np.float64), np.asarray(ref, np.float64)
    assert a.shape == ref.shape, f"shape {a.shape} != recorded {ref.shape}"
    if ref.size == 0:
        return 0.0
    return float(np.abs(a - ref).max() / max(np.abs(ref).max(), 1e-12))


_MODEL_FILES = {}


def model_files(dump):
    """A dump's model as a user has it: its /weights written as a
    .safetensors, its config as a .json, SAM 3's vocabulary as a .gz (made
    once per test session). Models are loaded from these, not from the .h5:
    the dump reader belongs to the parity harness, not to the library the
    package wraps."""
    import json
    import struct
    import tempfile

    dump = pathlib.Path(dump)
    if dump in _MODEL_FILES:
        return _MODEL_FILES[dump]
    d = pathlib.Path(tempfile.mkdtemp(prefix="samc-py-" + dump.stem + "-"))
    with h5py.File(dump, "r") as f:
        header, blobs, off = {}, [], 0
        for k, ds in f["weights"].items():
            b = np.ascontiguousarray(ds[()], np.float32).tobytes()
            header[k] = {"dtype": "F32", "shape": list(ds.shape), "data_offsets": [off, off + len(b)]}
            blobs.append(b)
            off += len(b)
        h = json.dumps(header).encode()
        h += b" " * (-len(h) % 8)
        (d / "model.safetensors").write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))
        cfg = f["model"].attrs["config_json"]
        (d / "config.json").write_text(cfg.decode() if isinstance(cfg, bytes) else cfg)
        vocab = None
        if "bpe_vocab_gz" in f["model"]:
            vocab = d / "bpe_simple_vocab_16e6.txt.gz"
            vocab.write_bytes(f["model"]["bpe_vocab_gz"][()].tobytes())
    _MODEL_FILES[dump] = (str(d / "model.safetensors"), str(d / "config.json"), vocab and str(vocab))
    return _MODEL_FILES[dump]


def load_model(dump):
    """samc.Model of a dump's model (model_files)."""
    import samc

    weights, config, vocab = model_files(dump)
    return samc.Model(weights, config=config, vocab=vocab)


def build_sam2(dump):
    """samc.build_sam2 on a dump's model, as a user builds one from a checkpoint and its config."""
    import samc

    weights, config, _ = model_files(dump)
    return samc.build_sam2(config, weights)


@atexit.register
def _remove_model_files():
    for weights, _, _ in _MODEL_FILES.values():
        shutil.rmtree(os.path.dirname(weights), ignore_errors=True)


@pytest.fixture(params=sorted(TOL))
def impl(request):
    return request.param


def ids(paths):
    return [p.stem for p in paths]
