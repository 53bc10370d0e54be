# SPDX-License-Identifier: Apache-2.0
"""Stand-ins for what the official SAM 3 code (facebookresearch/sam3) imports
but this environment (Debian: Python 3.11, torch 1.13 CPU, torchvision 0.14)
lacks.  Every shim is listed with its reason in tools/README.md ("SAM 3
shims").  Only what is missing is supplied; nothing here replaces a function
the environment has.  The few functions that take part in the numerics
(`F.scaled_dot_product_attention`, `torchvision.transforms.v2`, timm's `Mlp`)
restate the upstream semantics operation by operation (see their docstrings).

install(ftfy_src) must run before the first `import sam3`;
patch_cuda_allocations() right after it (it patches two sam3 modules).
"""

import contextlib
import enum
import math
import os
import sys
import types

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

INSTALLED = []   # names of the shims installed (written to the dump as a note)


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    mod.SAMC_SHIM = True
    sys.modules[name] = mod
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, mod)
    return mod


def _importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def _unavailable(what):
    def fn(*args, **kwargs):
        raise RuntimeError(f"{what} is not available in this environment "
                           "(samc sam3_shims stand-in); the image model never calls it")
    return fn


# --------------------------------------------------------------------------
# Packages missing from Debian, imported at module level by sam3
# --------------------------------------------------------------------------

def _shim_timm():
    """vitdet.py imports DropPath, Mlp, trunc_normal_ from timm.layers;
    memory.py / sam3_tracker_base.py import DropPath / trunc_normal_."""
    if _importable("timm"):
        return

    class DropPath(nn.Module):
        """timm DropPath: identity at eval (the only mode used here)."""

        def __init__(self, drop_prob=0.0, scale_by_keep=True):
            super().__init__()
            self.drop_prob = drop_prob
            self.scale_by_keep = scale_by_keep

        def forward(self, x):
            if self.drop_prob == 0.0 or not self.training:
                return x
            raise RuntimeError("DropPath stand-in: training mode is not supported")

    def _pair(x):
        return tuple(x) if isinstance(x, (tuple, list)) else (x, x)

    class Mlp(nn.Module):
        """timm.layers.Mlp (timm >= 0.9) as ViT blocks build it: fc1 -> act ->
        drop1 -> norm (Identity: norm_layer None) -> fc2 -> drop2; bias and
        drop accept a pair.  Same submodule names (fc1, act, drop1, norm, fc2,
        drop2), hence the same state_dict keys."""

        def __init__(self, in_features, hidden_features=None, out_features=None,
                     act_layer=nn.GELU, norm_layer=None, bias=True, drop=0.0,
                     use_conv=False):
            super().__init__()
            if use_conv:
                raise NotImplementedError("Mlp stand-in: use_conv")
            out_features = out_features or in_features
            hidden_features = hidden_features or in_features
            bias, drop_probs = _pair(bias), _pair(drop)
            self.fc1 = nn.Linear(in_features, hidden_features, bias=bias[0])
            self.act = act_layer()
            self.drop1 = nn.Dropout(drop_probs[0])
            self.norm = norm_layer(hidden_features) if norm_layer is not None else nn.Identity()
            self.fc2 = nn.Linear(hidden_features, out_features, bias=bias[1])
            self.drop2 = nn.Dropout(drop_probs[1])

        def forward(self, x):
            x = self.fc1(x)
            x = self.act(x)
            x = self.drop1(x)
            x = self.norm(x)
            x = self.fc2(x)
            x = self.drop2(x)
            return x

    def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
        """Initialisation only (every weight is then re-seeded by the dump
        tools); torch's own truncated normal."""
        return nn.init.trunc_normal_(tensor, mean, std, a, b)

    _module("timm")
    _module("timm.layers", DropPath=DropPath, Mlp=Mlp, trunc_normal_=trunc_normal_)
    INSTALLED.append("timm")


def _shim_iopath():
    """tokenizer_ve.py and model_builder.py open local files through
    g_pathmgr.open; plain open() is the same for local paths."""
    if _importable("iopath"):
        return
    _module("iopath")
    _module("iopath.common")
    _module("iopath.common.file_io", g_pathmgr=types.SimpleNamespace(open=open))
    INSTALLED.append("iopath")


def _shim_huggingface_hub():
    """model_builder.py imports hf_hub_download (only for load_from_HF)."""
    if _importable("huggingface_hub"):
        return
    _module("huggingface_hub", hf_hub_download=_unavailable("huggingface_hub.hf_hub_download"))
    INSTALLED.append("huggingface_hub")


def _shim_einops():
    """sam/rope.py (tracker) imports rearrange / repeat at module level; the
    image model never calls them."""
    if _importable("einops"):
        return
    _module("einops", rearrange=_unavailable("einops.rearrange"),
            repeat=_unavailable("einops.repeat"))
    INSTALLED.append("einops")


class _Anything:
    """Attribute sink for triton.language annotations (tl.constexpr, ...)."""

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()


def _shim_triton():
    """model/edt.py (imported via sam3_tracker_utils by model_builder) and
    perflib/triton/* define @triton.jit kernels at import time.  CUDA-only;
    the image model never launches them."""
    if _importable("triton"):
        return

    def jit(fn=None, **kwargs):
        if fn is None:
            return lambda f: _unavailable(f"triton kernel {f.__name__}")
        return _unavailable(f"triton kernel {fn.__name__}")

    _module("triton", jit=jit, cdiv=lambda a, b: -(-a // b))
    tl = _module("triton.language")
    tl.__getattr__ = lambda name: _Anything()
    INSTALLED.append("triton")


def _shim_decord_pycocotools():
    """sam3_image.py imports sam3.train.data.collator, whose package imports
    decord (video reading) and pycocotools (COCO masks) at module level."""
    if not _importable("decord"):
        _module("decord", cpu=_unavailable("decord.cpu"),
                VideoReader=_unavailable("decord.VideoReader"))
        INSTALLED.append("decord")
    if not _importable("pycocotools"):
        _module("pycocotools")
        _module("pycocotools.mask", encode=_unavailable("pycocotools.mask.encode"),
                decode=_unavailable("pycocotools.mask.decode"),
                area=_unavailable("pycocotools.mask.area"),
                toBbox=_unavailable("pycocotools.mask.toBbox"),
                merge=_unavailable("pycocotools.mask.merge"),
                frPyObjects=_unavailable("pycocotools.mask.frPyObjects"))
        INSTALLED.append("pycocotools")


def _use_real_ftfy(ftfy_src):
    """tokenizer_ve.py calls ftfy.fix_text.  The real (pure Python) ftfy is
    used, imported from the directory the user gives."""
    if ftfy_src:
        path = os.path.abspath(ftfy_src)
        if os.path.isdir(os.path.join(path, "ftfy")):
            sys.path.insert(0, path)
        elif os.path.basename(path) == "ftfy" and os.path.isdir(path):
            sys.path.insert(0, os.path.dirname(path))
        else:
            raise SystemExit(f"--ftfy-src {ftfy_src}: no ftfy package there")
    try:
        import ftfy  # noqa: F401
    except ImportError as e:
        raise SystemExit("ftfy is needed by the official tokenizer: pass --ftfy-src DIR "
                         f"(a checkout of rspeer/python-ftfy): {e}")


# --------------------------------------------------------------------------
# torch >= 2.x API missing from torch 1.13
# --------------------------------------------------------------------------

def sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
              scale=None):
    """F.scaled_dot_product_attention (torch >= 2.0) as the "math" backend
    computes it at eval: softmax((q @ k^T) * scale) @ v, scale = 1/sqrt(E),
    in the input dtype (fp32 here).  SAM 3's image model calls it only from
    the ViT (vitdet.Attention: no mask, no dropout, not causal); the fused
    kernels of torch 2.x differ from this by rounding only."""
    if attn_mask is not None or is_causal or dropout_p != 0.0:
        raise NotImplementedError("sdpa stand-in: mask / causal / dropout not supported")
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    attn = torch.matmul(query, key.transpose(-2, -1)) * scale
    return torch.matmul(attn.softmax(dim=-1), value)


def _shim_torch_api():
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = sdpa_math
        INSTALLED.append("F.scaled_dot_product_attention")
    if not _importable("torch.nn.attention"):
        # vl_combiner.py: `with sdpa_kernel([MATH, EFFICIENT, FLASH])` around
        # the text encoder -- a backend choice, no-op without fused kernels.
        class SDPBackend(enum.Enum):
            ERROR = -1
            MATH = 0
            FLASH_ATTENTION = 1
            EFFICIENT_ATTENTION = 2
            CUDNN_ATTENTION = 3

        @contextlib.contextmanager
        def sdpa_kernel(backends=None, set_priority=False):
            yield

        _module("torch.nn.attention", SDPBackend=SDPBackend, sdpa_kernel=sdpa_kernel)
        torch.nn.attention = sys.modules["torch.nn.attention"]
        INSTALLED.append("torch.nn.attention")
    if not hasattr(torch, "compiler"):
        # decoder.py asks torch.compiler.is_dynamo_compiling() in every
        # forward; nothing is compiled here.
        torch.compiler = types.SimpleNamespace(is_dynamo_compiling=lambda: False,
                                               is_compiling=lambda: False)
        INSTALLED.append("torch.compiler")


def _shim_pin_memory():
    """geometry_encoders._encode_boxes calls scale.pin_memory() on a 4-element
    CPU tensor (even for CPU inference); torch 1.13 CPU builds raise.  Pinning
    only changes where host memory lives: return the tensor itself."""
    if torch.cuda.is_available():
        return
    try:
        torch.zeros(1).pin_memory()
        return
    except RuntimeError:
        pass
    torch.Tensor.pin_memory = lambda self, *a, **k: self
    INSTALLED.append("Tensor.pin_memory")


def _shim_autocast():
    """sam3_video_inference.py decorates methods with
    torch.autocast(device_type="cuda", dtype=torch.bfloat16) at import time.
    Without CUDA, torch 1.13's autocast.__init__ first disables itself ("CUDA
    is not available. Disabling") and then still asks
    torch.cuda.is_bf16_supported(), which asserts "Torch not compiled with CUDA
    enabled".  The stand-in answers True when CUDA is absent, so the
    constructor finishes with autocast disabled (as torch >= 2 does); the
    decorated methods are video-only and nothing runs under autocast."""
    if torch.cuda.is_available():
        return
    import warnings
    warnings.filterwarnings("ignore", message="User provided device_type of 'cuda', but CUDA is not available")
    try:
        torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return
    except Exception:
        pass
    real = torch.cuda.is_bf16_supported
    torch.cuda.is_bf16_supported = lambda *a, **k: True if not torch.cuda.is_available() else real(*a, **k)
    INSTALLED.append("torch.cuda.is_bf16_supported (no CUDA)")


# --------------------------------------------------------------------------
# torchvision.transforms.v2 (torchvision >= 0.15; Debian has 0.14)
# --------------------------------------------------------------------------

def _pil_to_tensor(pic):
    """v2.functional.to_image for a PIL image = F.pil_to_tensor: the HWC uint8
    array as a CHW *view* (permute, no copy), as torchvision returns it."""
    arr = np.array(pic, copy=True)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return torch.as_tensor(arr).permute(2, 0, 1)


def to_image(inpt):
    """v2.functional.to_image: PIL -> pil_to_tensor; ndarray -> HWC to CHW
    (from_numpy(...).permute); tensors are returned as they are."""
    if isinstance(inpt, np.ndarray):
        t = torch.from_numpy(inpt)
        if t.ndim == 2:
            t = t.unsqueeze(-1)
        return t.permute(2, 0, 1)
    if isinstance(inpt, torch.Tensor):
        return inpt
    return _pil_to_tensor(inpt)


def _max_value(dtype):
    if dtype == torch.uint8:
        return 255
    raise NotImplementedError(f"ToDtype stand-in: integer input {dtype}")


class ToDtype:
    """v2.ToDtype(dtype, scale=True) on an image tensor (to_dtype_image):
    same dtype -> unchanged; int -> float: image.to(dtype).mul_(1.0 / 255)
    (a multiplication by the reciprocal, not a division)."""

    def __init__(self, dtype, scale=False):
        self.dtype, self.scale = dtype, scale

    def __call__(self, image):
        if image.dtype == self.dtype:
            return image
        if not self.scale:
            return image.to(self.dtype)
        if not image.is_floating_point() and self.dtype.is_floating_point:
            return image.to(self.dtype).mul_(1.0 / _max_value(image.dtype))
        raise NotImplementedError("ToDtype stand-in: only uint8 -> float with scale")


class Resize:
    """v2.Resize((h, w)) (bilinear, antialias=True by default) on a uint8 image
    tensor: resize_image of torchvision >= 0.17, step by step --
    unchanged if already (h, w); else reshape to (-1, C, H, W) (with the
    channels-last restride torchvision applies to a single CHW view), cast to
    float32, F.interpolate(mode="bilinear", align_corners=False,
    antialias=True), round_(), back to uint8.  This is the path torchvision
    takes for uint8 on CUDA and on CPUs without AVX2; on AVX2 CPUs torch >= 2
    has a native uint8 kernel that can differ by one level (the format page
    compares @preprocess at 1/255 for that reason)."""

    def __init__(self, size, antialias=True):
        assert len(size) == 2, "Resize stand-in: only (h, w)"
        self.size = [int(size[0]), int(size[1])]
        self.antialias = antialias

    def __call__(self, image):
        shape = image.shape
        c, h, w = shape[-3:]
        nh, nw = self.size
        if (nh, nw) == (h, w):
            return image
        if image.numel() == 0:
            return image.reshape(shape[:-3] + (c, nh, nw))
        dtype = image.dtype
        image = image.reshape(-1, c, h, w)
        strides = image.stride()
        if (image.is_contiguous(memory_format=torch.channels_last) and image.shape[0] == 1
                and image.numel() != strides[0]):
            new_strides = list(strides)
            new_strides[0] = image.numel()
            image = image.as_strided((1, c, h, w), new_strides)
        need_cast = dtype not in (torch.float32, torch.float64)
        if need_cast:
            image = image.to(dtype=torch.float32)
        image = F.interpolate(image, size=[nh, nw], mode="bilinear", align_corners=False,
                              antialias=self.antialias)
        if need_cast:
            if dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
                image = image.round_()
            image = image.to(dtype=dtype)
        return image.reshape(shape[:-3] + (c, nh, nw))


class Normalize:
    """v2.Normalize (normalize_image): mean/std as tensors of the image dtype,
    image.sub(mean).div_(std)."""

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = list(mean), list(std), inplace

    def __call__(self, image):
        if not image.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {image.dtype}.")
        mean = torch.as_tensor(self.mean, dtype=image.dtype, device=image.device).view(-1, 1, 1)
        std = torch.as_tensor(self.std, dtype=image.dtype, device=image.device).view(-1, 1, 1)
        image = image.sub_(mean) if self.inplace else image.sub(mean)
        return image.div_(std)


class Compose:
    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


def _shim_torchvision_v2():
    import torchvision
    import torchvision.transforms
    if getattr(sys.modules.get("torchvision.transforms.v2"), "SAMC_SHIM", False):
        return
    try:
        import torchvision.transforms.v2  # noqa: F401
        v = tuple(int(p) for p in torchvision.__version__.split(".")[:2])
        if v >= (0, 17):
            return
        raise SystemExit(f"torchvision {torchvision.__version__} has a v2 API whose Resize "
                         "defaults differ from >= 0.17; not supported by this tool")
    except ImportError:
        pass
    functional = _module("torchvision.transforms.v2.functional", to_image=to_image)
    v2 = _module("torchvision.transforms.v2", Compose=Compose, ToDtype=ToDtype,
                 Resize=Resize, Normalize=Normalize, functional=functional)
    torchvision.transforms.v2 = v2
    v2.functional = functional
    INSTALLED.append("torchvision.transforms.v2")


def install(ftfy_src=None):
    _shim_timm()
    _shim_iopath()
    _shim_huggingface_hub()
    _shim_einops()
    _shim_triton()
    _shim_decord_pycocotools()
    _use_real_ftfy(ftfy_src)
    _shim_torch_api()
    _shim_pin_memory()
    _shim_autocast()
    _shim_torchvision_v2()


# --------------------------------------------------------------------------
# Upstream CPU bug (sam3 #587): two constructors allocate on "cuda"
# --------------------------------------------------------------------------

class _CpuTorch:
    """A view of the torch module for one sam3 module's globals: the
    allocation functions that upstream calls with device="cuda" get the CPU
    instead; every other attribute is torch's own."""

    ALLOC = ("zeros", "arange")

    def __getattr__(self, name):
        real = getattr(torch, name)
        if name in self.ALLOC:
            def alloc(*args, **kwargs):
                if str(kwargs.get("device", "")) == "cuda" and not torch.cuda.is_available():
                    kwargs["device"] = "cpu"
                return real(*args, **kwargs)
            return alloc
        return real


def patch_cuda_allocations():
    """PositionEmbeddingSine.__init__ (precompute_resolution set) fills its
    cache from torch.zeros(..., device="cuda"), and TransformerDecoder.__init__
    (resolution and stride set) computes its boxRPB coordinate cache with
    torch.arange(..., device="cuda"); both raise on a CPU-only torch.  The
    values are device independent (sine tables, k / size), so they are
    computed on the CPU instead."""
    if torch.cuda.is_available():
        return
    import sam3.model.decoder
    import sam3.model.position_encoding
    for mod in (sam3.model.position_encoding, sam3.model.decoder):
        if not isinstance(mod.torch, _CpuTorch):
            mod.torch = _CpuTorch()
    INSTALLED.append("cuda allocations in PositionEmbeddingSine / TransformerDecoder -> cpu")
