# SPDX-License-Identifier: Apache-2.0
"""Checks of the arrays given to samc, and the array type of the results that
the official classes return as torch tensors.

Large inputs (images, frames, mask inputs) are read by C in place: they must
already be what C reads (dtype, C order, shape); anything else is refused
with a message saying what was given and what to pass, never copied or
converted silently. Small prompt arrays (points, labels, boxes) are
converted as the official predictors convert them (torch.as_tensor).
"""
import numpy as np

from ._native import arg_error


class TensorArray(np.ndarray):
    """A numpy array where the official code returns a torch tensor (video
    masks, image embeddings, SAM 3 results), with the few tensor methods that
    scripts written for the official API call on them: .cpu(), .numpy(),
    .detach(), .float(), .item() (numpy's). It is an ndarray in every other
    way; .numpy() gives the plain ndarray."""

    def cpu(self):
        return self

    def detach(self):
        return self

    def numpy(self):
        return self.view(np.ndarray)

    def float(self):
        return self.astype(np.float32)


def tensor(a):
    return a.view(TensorArray)


def _describe(a):
    order = "C-contiguous" if a.flags.c_contiguous else "not C-contiguous"
    return f"a {a.dtype} array of shape {a.shape} ({order})"


def image(img, what="image"):
    """An RGB image as C reads it: uint8, (H, W, 3), C-contiguous. A PIL image
    is converted to RGB (as the official predictors accept PIL images)."""
    if not isinstance(img, np.ndarray):
        if hasattr(img, "convert") and hasattr(img, "size"):  # PIL.Image
            return np.ascontiguousarray(np.asarray(img.convert("RGB")))
        raise arg_error(f"{what} must be a numpy array (H, W, 3) uint8 RGB or a PIL image, got {type(img).__name__}")
    if img.dtype != np.uint8:
        raise arg_error(f"{what} must be uint8 RGB (values 0..255), got {_describe(img)}; "
                        "convert with img.astype(np.uint8) if it holds 0..255 values")
    if img.ndim != 3 or img.shape[2] != 3:
        raise arg_error(f"{what} must have shape (H, W, 3) (RGB), got {_describe(img)}")
    if img.shape[0] < 1 or img.shape[1] < 1:
        raise arg_error(f"{what} is empty: shape {img.shape}")
    if not img.flags.c_contiguous:
        raise arg_error(f"{what} must be C-contiguous (samc reads it in place), got {_describe(img)}; "
                        "pass np.ascontiguousarray(...) of it")
    return img


def frames(video):
    """A video in memory: uint8 (T, H, W, 3), C-contiguous."""
    if not isinstance(video, np.ndarray):
        raise arg_error(f"video frames must be a numpy array (T, H, W, 3) uint8, got {type(video).__name__}")
    if video.dtype != np.uint8 or video.ndim != 4 or video.shape[3] != 3:
        raise arg_error(f"video frames must be uint8 of shape (T, H, W, 3), got {_describe(video)}")
    if 0 in video.shape:
        raise arg_error(f"video frames are empty: shape {video.shape}")
    if not video.flags.c_contiguous:
        raise arg_error(f"video frames must be C-contiguous (samc reads them in place), got {_describe(video)}")
    return video


def float_map(a, shape, what):
    """A float32 C-contiguous array of exactly `shape` (C reads it in place);
    None stays None. `shape` entries None match any size."""
    if a is None:
        return None
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):  # a torch tensor
        a = a.detach().cpu().numpy()
    if not isinstance(a, np.ndarray):
        raise arg_error(f"{what} must be a numpy float32 array, got {type(a).__name__}")
    want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
    if a.dtype != np.float32:
        raise arg_error(f"{what} must be float32 {want}, got {_describe(a)}")
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        raise arg_error(f"{what} must have shape {want}, got {_describe(a)}")
    if not a.flags.c_contiguous:
        raise arg_error(f"{what} must be C-contiguous (samc reads it in place), got {_describe(a)}")
    return a


def small(a, dtype, what):
    """A small prompt array (points, labels, boxes) converted as torch.as_tensor
    would (lists, tuples and other dtypes accepted); finite values only."""
    if a is None:
        return None
    if hasattr(a, "numpy") and not isinstance(a, np.ndarray):
        a = a.detach().cpu().numpy()
    try:
        arr = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    except (TypeError, ValueError) as e:
        raise arg_error(f"{what} must be numeric, got {type(a).__name__} ({e})") from None
    if not np.all(np.isfinite(arr)):
        raise arg_error(f"{what} holds a non-finite value: {arr.tolist()}")
    if dtype == np.int32:
        if np.any(arr != np.round(arr)):
            raise arg_error(f"{what} must hold integers, got {arr.tolist()}")
        if np.any(np.abs(arr) > 2**31 - 1):
            raise arg_error(f"{what} holds a value out of the int32 range")
    return np.ascontiguousarray(arr.astype(dtype))  # float64 -> float32 rounds as torch does
