# SPDX-License-Identifier: Apache-2.0
"""Minimal stand-ins for what the official SAM 2 code imports but this
environment (Debian: Python 3.11, torch 1.13 CPU, no torchvision, no hydra,
no iopath, no tqdm) lacks.  Every shim is listed, with the reason, in
tools/README.md.  Nothing here changes the numerics of the official code
except where it must supply a missing function; those functions reproduce the
upstream semantics exactly (see the docstrings).

install() must run before the first `import sam2`.
"""

import math
import sys
import types
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# --------------------------------------------------------------------------
# hydra / iopath / tqdm: imported at module level, never used for numerics.
# --------------------------------------------------------------------------

def _shim_hydra():
    """sam2/__init__.py calls hydra to register its config module.  We build
    configs ourselves (sam2_build.py), so report "already initialised"."""
    if "hydra" in sys.modules:
        return
    hydra = types.ModuleType("hydra")
    hydra.initialize_config_module = lambda *a, **k: None
    core = types.ModuleType("hydra.core")
    global_hydra = types.ModuleType("hydra.core.global_hydra")

    class GlobalHydra:
        @staticmethod
        def instance():
            return GlobalHydra()

        def is_initialized(self):
            return True

    global_hydra.GlobalHydra = GlobalHydra
    hydra.core = core
    core.global_hydra = global_hydra
    sys.modules.update({"hydra": hydra, "hydra.core": core,
                        "hydra.core.global_hydra": global_hydra})


def _shim_iopath():
    """hieradet.py imports g_pathmgr only to open an optional `weights_path`
    (never set by the configs).  Plain open() is the same for local paths."""
    if "iopath" in sys.modules:
        return
    names = ["iopath", "iopath.common", "iopath.common.file_io"]
    mods = {n: types.ModuleType(n) for n in names}
    mods["iopath.common.file_io"].g_pathmgr = types.SimpleNamespace(open=open)
    sys.modules.update(mods)


def _shim_tqdm():
    """utils/misc.py and the video predictor import tqdm for progress bars."""
    try:
        import tqdm  # noqa: F401
        return
    except ImportError:
        pass
    mod = types.ModuleType("tqdm")
    mod.tqdm = lambda iterable=None, *a, **k: iterable
    sys.modules["tqdm"] = mod


# --------------------------------------------------------------------------
# torch 2.0 API missing from torch 1.13
# --------------------------------------------------------------------------

def sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0,
              is_causal=False, scale=None):
    """F.scaled_dot_product_attention (torch >= 2.0), reduced to what SAM 2
    uses at eval time: no mask, no dropout, not causal, default scale.
    Computes softmax((q @ k^T) * scale) @ v in the input dtype (the "math"
    kernel; fused kernels differ only by rounding)."""
    if attn_mask is not None or is_causal or dropout_p != 0.0:
        raise NotImplementedError("sdpa shim: mask/causal/dropout not supported")
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    attn = torch.matmul(query, key.transpose(-2, -1)) * scale
    return torch.matmul(attn.softmax(dim=-1), value)


def _shim_sdpa():
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = sdpa_math


# --------------------------------------------------------------------------
# torchvision.transforms: ToTensor, Resize, Normalize (used by SAM2Transforms)
# --------------------------------------------------------------------------

class ToTensor:
    """torchvision.transforms.ToTensor for numpy / PIL input:
    HWC uint8 -> CHW float32 divided by 255 (a true division, float32).
    A non-uint8 ndarray is returned as CHW without rescaling, as upstream."""

    def __call__(self, pic):
        arr = np.asarray(pic)
        if arr.ndim == 2:
            arr = arr[:, :, None]
        img = torch.from_numpy(arr.transpose((2, 0, 1))).contiguous()
        if img.dtype == torch.uint8:
            return img.to(dtype=torch.get_default_dtype()).div(255)
        return img


class Resize(nn.Module):
    """torchvision.transforms.Resize((h, w)) for float tensors, torchvision
    >= 0.17 semantics (antialias defaults to True):
      - returns the input unchanged when it already has the target size;
      - otherwise F.interpolate(x[None], size, mode="bilinear",
        align_corners=False, antialias=True)[0].
    Integer input (never used by SAM 2) is rejected rather than emulated."""

    def __init__(self, size, antialias: bool = True):
        super().__init__()
        assert len(size) == 2, "only Resize((h, w)) is shimmed"
        self.size = [int(size[0]), int(size[1])]
        self.antialias = antialias

    def forward(self, img: torch.Tensor) -> torch.Tensor:
        h, w = img.shape[-2], img.shape[-1]
        if h == self.size[0] and w == self.size[1]:
            return img
        if not img.is_floating_point():
            raise RuntimeError("Resize shim: float input only")
        squeeze = img.dim() < 4
        x = img.unsqueeze(0) if squeeze else img
        x = F.interpolate(x, size=self.size, mode="bilinear",
                          align_corners=False, antialias=self.antialias)
        return x.squeeze(0) if squeeze else x


class Normalize(nn.Module):
    """torchvision.transforms.Normalize: mean/std become tensors of the input
    dtype (float32), then (x - mean) / std, a true division."""

    def __init__(self, mean, std):
        super().__init__()
        self.mean = [float(m) for m in mean]
        self.std = [float(s) for s in std]

    def forward(self, tensor: torch.Tensor) -> torch.Tensor:
        mean = torch.tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
        std = torch.tensor(self.std, dtype=tensor.dtype, device=tensor.device)
        return tensor.sub(mean.view(-1, 1, 1)).div(std.view(-1, 1, 1))


def _shim_torchvision():
    if getattr(sys.modules.get("torchvision"), "SAMC_SHIM", False):
        return
    try:
        import torchvision  # noqa: F401
        import torchvision.transforms as transforms
        v = tuple(int(p) for p in torchvision.__version__.split(".")[:2])
        if v >= (0, 17):
            return  # the real thing, with antialias=True by default
        # An older torchvision (Debian's 0.14) resizes without antialias by
        # default, unlike the >= 0.17 that sam2 requires: keep its ops (nms,
        # roi_align) and replace only the three transforms SAM2Transforms uses.
        transforms.ToTensor, transforms.Resize, transforms.Normalize = ToTensor, Resize, Normalize
        torchvision.SAMC_SHIM = True
        return
    except ImportError:
        pass
    tv = types.ModuleType("torchvision")
    tv.__version__ = "0.0+samc-shim"
    tv.SAMC_SHIM = True
    tr = types.ModuleType("torchvision.transforms")
    tr.ToTensor, tr.Resize, tr.Normalize = ToTensor, Resize, Normalize
    tv.transforms = tr
    sys.modules.update({"torchvision": tv, "torchvision.transforms": tr})


# --------------------------------------------------------------------------
# sam2._C (CUDA connected components): only for max_hole_area /
# max_sprinkle_area > 0.  Without it the official code silently skips hole
# filling, so a CPU version is provided to make those options meaningful.
# --------------------------------------------------------------------------

def connected_components_8(mask):
    """(N,1,H,W) uint8 -> (labels int32, counts int32), 8-connectivity.
    Labels are 1-based per image (the CUDA kernel's labels are not consecutive;
    SAM 2 only uses labels > 0 and counts, which agree)."""
    m = mask.cpu().numpy().astype(bool)
    labels = np.zeros(m.shape, np.int32)
    counts = np.zeros(m.shape, np.int32)
    n, _, h, w = m.shape
    for b in range(n):
        fg, lab, cnt = m[b, 0], labels[b, 0], counts[b, 0]
        next_label = 0
        for y0, x0 in zip(*np.nonzero(fg)):
            if lab[y0, x0]:
                continue
            next_label += 1
            lab[y0, x0] = next_label
            pixels, queue = [], deque([(y0, x0)])
            while queue:
                y, x = queue.popleft()
                pixels.append((y, x))
                for dy in (-1, 0, 1):
                    for dx in (-1, 0, 1):
                        yy, xx = y + dy, x + dx
                        if 0 <= yy < h and 0 <= xx < w and fg[yy, xx] and not lab[yy, xx]:
                            lab[yy, xx] = next_label
                            queue.append((yy, xx))
            ys, xs = zip(*pixels)
            cnt[list(ys), list(xs)] = len(pixels)
    return torch.from_numpy(labels), torch.from_numpy(counts)


def install_connected_components():
    """Register sam2._C with the CPU labelling (call after importing sam2)."""
    mod = types.ModuleType("sam2._C")
    mod.get_connected_componnets = connected_components_8  # upstream spelling
    sys.modules["sam2._C"] = mod
    import sam2
    sam2._C = mod


def install():
    _shim_hydra()
    _shim_iopath()
    _shim_tqdm()
    _shim_sdpa()
    _shim_torchvision()
