# SPDX-License-Identifier: Apache-2.0
"""The keyword arguments every samc class takes beside the official ones:
which implementation runs, on how many threads, per-layer overrides, and a
progress callback."""
from . import _native
from ._native import lib


def overrides_list(overrides):
    """{"image_encoder.trunk.blocks.3": "ref"} or ["image_encoder=ref", ...]
    as a list of "LAYER=IMPL" strings."""
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [f"{k}={v}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def check_threads(threads):
    if not isinstance(threads, int) or threads < 0:
        raise _native.arg_error(f"threads must be an integer >= 0 (0: OpenMP's default), got {threads!r}")
    return threads


def apply_overrides(fn, handle, overrides):
    """fn(handle, "LAYER=IMPL", err) for each override (samc_*_override)."""
    for spec in overrides_list(overrides):
        err = _native.new_error()
        _native.raise_for(fn(handle, spec.encode("utf-8"), err), err)


def progress_args(params, progress):
    """Route params.progress to the Python side (samc._native) when there is
    a progress callable (else none: no GIL taken per layer)."""
    if progress is not None:
        params.progress = lib.samc_py_progress
        params.progress_user = _native.ffi.NULL
    return progress
