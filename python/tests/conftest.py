"""Shared fixtures of the Python tests: the repository's committed dumps,
read with h5py (every file closed before samc opens it: HDF5 refuses a second
open of a file with other access settings), and the tolerances of the parity
harness (core/runtime/impl_table.c: fast 1e-4, ref 1e-5, relative to the
largest recorded magnitude, as PARITY_DUMP_FORMAT.md's comparison)."""
import os
import pathlib

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


@pytest.fixture(params=sorted(TOL))
def impl(request):
    return request.param


def ids(paths):
    return [p.stem for p in paths]
