# SPDX-License-Identifier: Apache-2.0
"""Image files through the library's own decoders (the ones the samc
command uses: libjpeg-turbo, decoding JPEG as Pillow does, and stb_image)."""
import os

import numpy as np

from . import _native
from ._native import ffi, lib


def read_image(path):
    """An image file (PNG, JPEG, BMP, PNM, ...) as an (H, W, 3) uint8 RGB array."""
    rgb = ffi.new("uint8_t **")
    h, w = ffi.new("int *"), ffi.new("int *")
    err = _native.new_error()
    _native.raise_for(lib.samc_read_image(os.fspath(path).encode("utf-8"), rgb, h, w, err), err)
    try:
        return _native.copy_out(rgb[0], (h[0], w[0], 3), np.uint8)
    finally:
        lib.samc_free(rgb[0])


def write_png(path, image):
    """Write an (H, W) gray or (H, W, 3) RGB uint8 array (a bool mask becomes
    0/255) as a PNG."""
    a = np.asarray(image)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8) * 255
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] != 3):
        raise _native.arg_error(f"write_png takes (H, W) or (H, W, 3) uint8 (or a bool mask), got {a.dtype} "
                                f"{a.shape}")
    a = np.ascontiguousarray(a)
    err = _native.new_error()
    st = lib.samc_write_png(os.fspath(path).encode("utf-8"), ffi.from_buffer("uint8_t[]", a), a.shape[0],
                            a.shape[1], 1 if a.ndim == 2 else 3, err)
    _native.raise_for(st, err)
