# SPDX-License-Identifier: Apache-2.0
"""Recording of module / function calls and the HDF5 writer for the parity
dump format (the format read by parity/dump.c, version 1).

Values are converted when the call happens (inputs before the call, outputs
right after it), so later in-place edits by the caller (e.g. forward_image
replacing backbone_fpn[0]) cannot leak into the record.

Storage conventions (the doc leaves these choices to the writer):
  floating tensors -> float32; int64 stays int64; other ints -> int32;
  uint8 stays uint8 (images); bool tensors -> uint8 (0/1) by default (the
  SAM 2 tools), int32 (0/1) with bool_dtype=np.int32 (the SAM 3 tool, as
  the format page's general rule says); complex tensors -> float32
  view_as_real with the dataset attribute torch_dtype = "complex64";
  scalar bool -> int32 attribute 0/1 (h5py would write an HDF5 enum, which
  C readers cannot convert to an integer); scalar int -> int64 attribute;
  scalar float -> float64 attribute; None -> attribute with a NULL dataspace;
  strings -> variable-length UTF-8.
"""

import hashlib
import os

import h5py
import numpy as np
import torch

NONE = object()  # marker for None in flattened slot lists


# --------------------------------------------------------------------------
# Value conversion
# --------------------------------------------------------------------------

def to_array(x, bool_dtype=np.uint8):
    """Tensor / ndarray -> numpy array in the dump's dtype (a copy).  Complex
    tensors stay complex64 here; Writer.dataset stores them as view_as_real."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        if x.is_floating_point():
            x = x.to(torch.float32)
        elif x.is_complex():
            x = x.to(torch.complex64)
        x = x.numpy()
    a = np.array(x, copy=True)
    if a.dtype == np.bool_:
        return a.astype(bool_dtype)
    if a.dtype.kind == "c":
        return a.astype(np.complex64)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iu" and a.dtype not in (np.int64, np.int32, np.uint8):
        return a.astype(np.int32)
    return a


def to_scalar(x):
    if isinstance(x, (bool, np.bool_)):
        return np.int32(int(x))
    if isinstance(x, (int, np.integer)):
        return np.int64(x)
    return np.float64(x)


def _join(prefix, key):
    return f"{prefix}.{key}" if prefix else str(key)


class Options:
    """How values are converted: bool_dtype for bool tensors; expand(obj)
    may return a dict standing for an object that is not a tensor, scalar or
    container (e.g. SAM 3's geometry Prompt), or None to skip it."""

    def __init__(self, bool_dtype=np.uint8, expand=None):
        self.bool_dtype = bool_dtype
        self.expand = expand


DEFAULT = Options()


def flatten(obj, prefix, out, opts=DEFAULT):
    """Append (slot, value) pairs; value is an ndarray, a numpy scalar or
    NONE.  Nested tuples/lists/dicts join their keys with '.'; anything else
    (strings, modules, ...) is skipped unless opts.expand turns it into a
    dict."""
    if isinstance(obj, (torch.Tensor, np.ndarray)):
        out.append((prefix, to_array(obj, opts.bool_dtype)))
    elif obj is None:
        out.append((prefix, NONE))
    elif isinstance(obj, (bool, int, float, np.bool_, np.integer, np.floating)):
        out.append((prefix, to_scalar(obj)))
    elif isinstance(obj, (tuple, list)):
        for i, v in enumerate(obj):
            flatten(v, _join(prefix, i), out, opts)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, _join(prefix, k), out, opts)
    elif opts.expand is not None:
        d = opts.expand(obj)
        if d is not None:
            flatten(d, prefix, out, opts)
    return out


def flatten_inputs(args, kwargs, opts=DEFAULT):
    out = []
    for i, a in enumerate(args):
        flatten(a, str(i), out, opts)
    for k, v in kwargs.items():
        flatten(v, k, out, opts)
    return out


def flatten_outputs(result, opts=DEFAULT):
    """A single value is slot "0"; tuple/list items and dict keys are slots."""
    if isinstance(result, (tuple, list, dict)):
        return flatten(result, "", [], opts)
    return flatten(result, "0", [], opts)


# --------------------------------------------------------------------------
# Tracer
# --------------------------------------------------------------------------

class Record:
    def __init__(self, module, call, cls, inputs):
        self.module, self.call, self.cls = module, call, cls
        self.inputs, self.outputs = inputs, None


class Tracer:
    """Collects Records in completion order (children before parents)."""

    def __init__(self, opts=DEFAULT):
        self.records = []
        self._calls = {}
        self.opts = opts

    def _begin(self, name, cls, args, kwargs):
        call = self._calls.get(name, 0)
        self._calls[name] = call + 1
        return Record(name, call, cls, flatten_inputs(args, kwargs, self.opts))

    def _end(self, rec, result, out_transform=None):
        shown = out_transform(result) if out_transform else result
        rec.outputs = flatten_outputs(shown, self.opts)
        self.records.append(rec)

    def add(self, name, cls, inputs, outputs):
        """Record a call from (slot, value) lists made by the caller (values
        already converted), numbered like intercepted calls."""
        call = self._calls.get(name, 0)
        self._calls[name] = call + 1
        rec = Record(name, call, cls, inputs)
        rec.outputs = outputs
        self.records.append(rec)
        return rec

    def wrap_module(self, name, module):
        """Replace module.forward on the instance, so nn.Module.__call__ goes
        through the wrapper and keyword arguments are seen."""
        orig = module.forward
        cls = type(module).__name__

        def forward(*args, **kwargs):
            rec = self._begin(name, cls, args, kwargs)
            result = orig(*args, **kwargs)
            self._end(rec, result)
            return result

        module.forward = forward

    def wrap_callable(self, fn, name, cls, out_transform=None):
        """Return a recording wrapper of fn (a bound method or function)."""

        def wrapper(*args, **kwargs):
            rec = self._begin(name, cls, args, kwargs)
            result = fn(*args, **kwargs)
            self._end(rec, result, out_transform)
            return result

        return wrapper


# --------------------------------------------------------------------------
# HDF5 writing
# --------------------------------------------------------------------------

STR = h5py.string_dtype(encoding="utf-8")


def set_str_attr(obj, name, value):
    obj.attrs.create(name, value, dtype=STR)


def set_attr(obj, name, value):
    """Scalar attribute, None as an empty (NULL dataspace) attribute."""
    if value is NONE or value is None:
        obj.attrs.create(name, h5py.Empty("f"))
    elif isinstance(value, str):
        set_str_attr(obj, name, value)
    else:
        obj.attrs.create(name, to_scalar(value) if not isinstance(value, np.generic) else value)


class Writer:
    """Creates datasets, gzip-compressed (with shuffle) when asked and the
    array is big enough for chunking to pay off."""

    MIN_COMPRESS_BYTES = 65536  # smaller chunked datasets cost more in B-tree nodes than gzip saves

    def __init__(self, path, compress=False):
        self.f = h5py.File(path, "w")  # default libver: HDF5 1.8-compatible
        self.compress = compress

    def dataset(self, group, name, array):
        array = np.ascontiguousarray(array)
        complex_dtype = None
        if array.dtype.kind == "c":   # torch.view_as_real layout, float32
            complex_dtype = "complex64"
            array = np.ascontiguousarray(np.stack([array.real, array.imag], axis=-1)
                                         .astype(np.float32))
        kw = {}
        if self.compress and self.worth_compressing(array):
            kw = dict(compression="gzip", compression_opts=9, shuffle=True)
        d = group.create_dataset(name, data=array, **kw)
        if complex_dtype:
            set_str_attr(d, "torch_dtype", complex_dtype)
        return d

    def worth_compressing(self, array):
        return array.nbytes >= self.MIN_COMPRESS_BYTES and array.ndim > 0

    def slots(self, group, items):
        """Write (slot, value) pairs: arrays as datasets, the rest as attrs."""
        for slot, value in items:
            if isinstance(value, np.ndarray):
                self.dataset(group, slot, value)
            else:
                set_attr(group, slot, value)

    def trace(self, records):
        root = self.f.create_group("trace")
        for i, rec in enumerate(records):
            g = root.create_group(f"{i:06d}")
            set_str_attr(g, "module", rec.module)
            g.attrs.create("call", np.int64(rec.call))
            set_str_attr(g, "class", rec.cls)
            self.slots(g.create_group("in"), rec.inputs)
            self.slots(g.create_group("out"), rec.outputs)

    def close(self):
        self.f.close()


# --------------------------------------------------------------------------
# Writer that hard-links repeated trace tensors (used by the SAM 3 tool; the
# same scheme as dump_sam2_video.VideoWriter)
# --------------------------------------------------------------------------

def _create_group_untimed(self, name):
    gcpl = h5py.h5p.create(h5py.h5p.GROUP_CREATE)
    gcpl.set_obj_track_times(False)
    return h5py.Group(h5py.h5g.create(self.id, name.encode(), gcpl=gcpl))


class LinkingWriter(Writer):
    """HDF5 1.8 object formats (compact groups), no modification times (the
    same command gives the same bytes), and in /trace a tensor identical
    (dtype, shape, bytes) to one already written is stored as a second hard
    link to that dataset.  Every HDF5 dataset is a hard link, so readers see
    ordinary datasets; only tools listing *objects* see each once."""

    def __init__(self, path, compress=False):
        fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
        fapl.set_libver_bounds(h5py.h5f.LIBVER_V18, h5py.h5f.LIBVER_V18)
        fcpl = h5py.h5p.create(h5py.h5p.FILE_CREATE)
        fcpl.set_obj_track_times(False)
        self.f = h5py.File(h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC,
                                           fapl=fapl, fcpl=fcpl))
        self.compress = compress
        self._seen = None
        self.links = 0

    def group(self, parent, name):
        return _create_group_untimed(parent, name)

    def dataset(self, group, name, array):
        if self._seen is None:
            return super().dataset(group, name, array)
        array = np.ascontiguousarray(array)
        key = (array.dtype.str, array.shape, hashlib.sha1(array.tobytes()).hexdigest())
        if key in self._seen:
            group[name] = self.f[self._seen[key]]
            self.links += 1
            return group[name]
        d = super().dataset(group, name, array)
        self._seen[key] = d.name
        return d

    def trace(self, records):
        self._seen = {}
        root = self.group(self.f, "trace")
        for i, rec in enumerate(records):
            g = self.group(root, f"{i:06d}")
            set_str_attr(g, "module", rec.module)
            g.attrs.create("call", np.int64(rec.call))
            set_str_attr(g, "class", rec.cls)
            write_scope_attrs(g, getattr(rec, "attrs", {}))
            self.slots(self.group(g, "in"), rec.inputs)
            self.slots(self.group(g, "out"), rec.outputs)
        self._seen = None


def write_scope_attrs(g, attrs):
    """Extra record attributes (the video tasks' scope: frame_idx, obj_id,
    obj_ids, samc_note): ints as int64, int lists as int64 arrays, strings as
    UTF-8.  Keys starting with '_' are the tracer's private context."""
    for k, v in attrs.items():
        if k.startswith("_") or v is None:
            continue
        if isinstance(v, str):
            set_str_attr(g, k, v)
        elif isinstance(v, (list, tuple, np.ndarray)):
            g.attrs.create(k, np.asarray(v, dtype=np.int64).reshape(-1))
        else:
            g.attrs.create(k, np.int64(v))


class CompactLinkingWriter(LinkingWriter):
    """LinkingWriter for traces of many small records (the SAM 3 video and
    predict_inst dumps): gzip only where it pays -- integer and boolean
    arrays (masks, ids) of >= 4 KiB, float arrays of >= 64 KiB (random
    float32 values barely compress, and each chunked dataset costs an index)."""

    def worth_compressing(self, array):
        if array.ndim == 0:
            return False
        if array.dtype.kind in "iub":
            return array.nbytes >= 4096
        return array.nbytes >= 65536
