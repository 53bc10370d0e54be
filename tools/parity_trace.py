"""Recording of module / function calls and the HDF5 writer for the parity
dump format (shared/docs/PARITY_DUMP_FORMAT.md, version 1).

Values are converted when the call happens (inputs before the call, outputs
right after it), so later in-place edits by the caller (e.g. forward_image
replacing backbone_fpn[0]) cannot leak into the record.

Storage conventions (the doc leaves these choices to the writer):
  floating tensors -> float32; int64 stays int64; other ints -> int32;
  uint8 stays uint8 (images); bool tensors -> uint8 (0/1);
  scalar bool -> int32 attribute 0/1 (h5py would write an HDF5 enum, which
  C readers cannot convert to an integer); scalar int -> int64 attribute;
  scalar float -> float64 attribute; None -> attribute with a NULL dataspace;
  strings -> variable-length UTF-8.
"""

import h5py
import numpy as np
import torch

NONE = object()  # marker for None in flattened slot lists


# --------------------------------------------------------------------------
# Value conversion
# --------------------------------------------------------------------------

def to_array(x):
    """Tensor / ndarray -> numpy array in the dump's dtype (a copy)."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        if x.dtype == torch.bool:
            x = x.to(torch.uint8)
        elif x.is_floating_point():
            x = x.to(torch.float32)
        x = x.numpy()
    a = np.array(x, copy=True)
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
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


def flatten(obj, prefix, out):
    """Append (slot, value) pairs; value is an ndarray, a numpy scalar or
    NONE.  Nested tuples/lists/dicts join their keys with '.'; anything else
    (strings, modules, ...) is skipped."""
    if isinstance(obj, (torch.Tensor, np.ndarray)):
        out.append((prefix, to_array(obj)))
    elif obj is None:
        out.append((prefix, NONE))
    elif isinstance(obj, (bool, int, float, np.bool_, np.integer, np.floating)):
        out.append((prefix, to_scalar(obj)))
    elif isinstance(obj, (tuple, list)):
        for i, v in enumerate(obj):
            flatten(v, _join(prefix, i), out)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, _join(prefix, k), out)
    return out


def flatten_inputs(args, kwargs):
    out = []
    for i, a in enumerate(args):
        flatten(a, str(i), out)
    for k, v in kwargs.items():
        flatten(v, k, out)
    return out


def flatten_outputs(result):
    """A single value is slot "0"; tuple/list items and dict keys are slots."""
    if isinstance(result, (tuple, list, dict)):
        return flatten(result, "", [])
    return flatten(result, "0", [])


# --------------------------------------------------------------------------
# Tracer
# --------------------------------------------------------------------------

class Record:
    def __init__(self, module, call, cls, inputs):
        self.module, self.call, self.cls = module, call, cls
        self.inputs, self.outputs = inputs, None


class Tracer:
    """Collects Records in completion order (children before parents)."""

    def __init__(self):
        self.records = []
        self._calls = {}

    def _begin(self, name, cls, args, kwargs):
        call = self._calls.get(name, 0)
        self._calls[name] = call + 1
        return Record(name, call, cls, flatten_inputs(args, kwargs))

    def _end(self, rec, result, out_transform=None):
        shown = out_transform(result) if out_transform else result
        rec.outputs = flatten_outputs(shown)
        self.records.append(rec)

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
        kw = {}
        if self.compress and array.nbytes >= self.MIN_COMPRESS_BYTES and array.ndim > 0:
            kw = dict(compression="gzip", compression_opts=9, shuffle=True)
        return group.create_dataset(name, data=array, **kw)

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
