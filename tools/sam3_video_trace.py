# SPDX-License-Identifier: Apache-2.0
"""Recording of the official SAM 3 video loop (task sam3_video, docs/parity.md):
the scoped tracer, the parity points of the detector and the tracker, and the
function records of the per-frame loop (detections, tracker propagation, the
planning decisions, execution, outputs).  dump_sam3_video.py installs it.

Scope: every record made while the loop works on a frame carries frame_idx;
a tracker call carries obj_ids (the objects of the batch, in batch order) and
obj_id when the batch holds one object.  The detector's records carry the
frame whose image they process: the official detector computes frame f+1
ahead while frame f is processed (Sam3ImageOnVideoMultiGPU), so those records
appear in the trace during frame f with frame_idx f+1.
"""

import contextlib

import numpy as np
import torch

from dump_sam3 import expand_prompt, parity_point_names
from parity_trace import NONE, Options, Tracer, flatten, to_array

BOOL = np.int32          # the format page: boolean tensors are int32


def _ids(x):
    """An id collection (array, list, set, tensor) as a sorted-if-set int64 array."""
    if isinstance(x, set):
        x = sorted(x)
    if isinstance(x, torch.Tensor):
        x = x.cpu().numpy()
    return np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=np.int64).reshape(-1)


def _pairs(d):
    """{int: int or float} -> [K, 2] array (key, value), keys sorted."""
    keys = sorted(d)
    dtype = np.float64 if any(isinstance(d[k], float) for k in keys) else np.int64
    return np.array([[k, d[k]] for k in keys], dtype=dtype).reshape(-1, 2)


# --------------------------------------------------------------------------
# Tracer with a scope
# --------------------------------------------------------------------------

class ScopeTracer(Tracer):
    """Records carry the scope (frame_idx, obj_ids, obj_id) of the context
    stack; records still open when a bf16 upcast happens get samc_note."""

    def __init__(self):
        super().__init__(Options(bool_dtype=BOOL, expand=expand_prompt))
        self._ctx = [{}]
        self.open = []

    @contextlib.contextmanager
    def context(self, **kw):
        self._ctx.append({**self._ctx[-1], **kw})
        try:
            yield
        finally:
            self._ctx.pop()

    def current(self, key):
        return self._ctx[-1].get(key)

    def scope(self):
        ctx = self._ctx[-1]
        attrs = {}
        if ctx.get("frame_idx") is not None:
            attrs["frame_idx"] = int(ctx["frame_idx"])
        ids = ctx.get("obj_ids")
        if ids is not None:
            attrs["obj_ids"] = [int(i) for i in ids]
            if len(ids) == 1:
                attrs["obj_id"] = int(ids[0])
        return attrs

    def _begin(self, name, cls, args, kwargs):
        rec = super()._begin(name, cls, args, kwargs)
        rec.attrs = self.scope()
        self.open.append(rec)
        return rec

    def _end(self, rec, result, out_transform=None):
        super()._end(rec, result, out_transform)
        self.open.remove(rec)

    def add(self, name, cls, inputs, outputs, **attrs):
        rec = super().add(name, cls, inputs, outputs)
        rec.attrs = {**self.scope(), **attrs}
        return rec

    def flat(self, obj, prefix=""):
        return flatten(obj, prefix, [], self.opts)

    def note_open(self, text):
        for rec in self.open:
            old = rec.attrs.get("samc_note")
            if old is None:
                rec.attrs["samc_note"] = text
            elif text not in old.split("\n"):
                rec.attrs["samc_note"] = old + "\n" + text


# --------------------------------------------------------------------------
# Parity points
# --------------------------------------------------------------------------

def detector_point_names(detector):
    """The sam3_image parity points (names relative to the detector, as the
    image dumps name them) plus the tracker neck sam2_convs.{i}."""
    names = parity_point_names(detector)
    neck = detector.backbone.vision_backbone
    if neck.sam2_convs is not None:
        i = names.index("backbone.vision_backbone")
        names[i:i] = [f"backbone.vision_backbone.sam2_convs.{k}" for k in range(len(neck.sam2_convs))]
    return names


def tracker_point_names(tracker, prefix="tracker."):
    """Every tracker part under its module name."""
    enc = tracker.transformer.encoder
    dec = tracker.sam_mask_decoder
    mb = tracker.maskmem_backbone
    names = ["sam_mask_decoder.conv_s0", "sam_mask_decoder.conv_s1", "sam_prompt_encoder"]
    names += [f"sam_mask_decoder.transformer.layers.{i}" for i in range(len(dec.transformer.layers))]
    names += ["sam_mask_decoder.transformer", "sam_mask_decoder", "obj_ptr_proj",
              "obj_ptr_tpos_proj", "mask_downsample"]
    names += [f"transformer.encoder.layers.{i}" for i in range(len(enc.layers))]
    names += ["transformer.encoder", "maskmem_backbone.mask_downsampler"]
    names += [f"maskmem_backbone.fuser.layers.{i}" for i in range(len(mb.fuser.layers))]
    names += ["maskmem_backbone"]
    return [prefix + n for n in names]


def wrap_points(tracer, model, full):
    """Record the parity points of the video model: detector points under
    their image-task names, tracker points under tracker.*."""
    det = dict(model.detector.named_modules())
    trk = dict(model.tracker.named_modules())
    if full:
        dnames = [n for n in det if n]
        tnames = ["tracker." + n for n in trk if n]
    else:
        dnames = detector_point_names(model.detector)
        tnames = tracker_point_names(model.tracker)
    for n in dnames:
        tracer.wrap_module(n, det[n])
    for n in tnames:
        tracer.wrap_module(n, trk[n[len("tracker."):]])


class TracedTokenizer:
    """Stands in for VETextEncoder.tokenizer: @tokenize, in attrs "0", "1", ...
    the texts of the call (the video model encodes [prompt text, "visual"]
    together), attr context_length; out/0 the ids [n, L] int64."""

    def __init__(self, inner, tracer):
        self._inner, self._tracer = inner, tracer
        self.texts = []

    def __call__(self, texts, context_length=None):
        result = self._inner(texts, context_length=context_length)
        texts = [texts] if isinstance(texts, str) else list(texts)
        inputs = [(str(i), t) for i, t in enumerate(texts)]
        inputs.append(("context_length", NONE if context_length is None else np.int64(context_length)))
        self._tracer.add("@tokenize", "SimpleTokenizer", inputs, [("0", to_array(result))])
        self.texts.append(texts)
        return result

    def __getattr__(self, name):
        return getattr(self._inner, name)


# --------------------------------------------------------------------------
# Helpers to wrap methods and module functions
# --------------------------------------------------------------------------

def wrap_method(obj, name, make):
    """obj.name = make(original bound method)."""
    real = getattr(obj, name)
    setattr(obj, name, make(real))
    return real


def wrap_global(module, name, make):
    real = getattr(module, name)
    setattr(module, name, make(real))
    return real


def scoped_generator(tracer, real, scope_of):
    """A generator method whose steps run inside a tracer context (only while
    the generator itself runs, not while its caller handles a yield)."""

    def gen(*args, **kwargs):
        it = real(*args, **kwargs)
        while True:
            with tracer.context(**scope_of(*args, **kwargs)):
                try:
                    item = next(it)
                except StopIteration:
                    return
            yield item

    return gen


def state_obj_ids(state):
    return [int(i) for i in state["obj_ids"]]


def snapshot_hotstart(meta, frame_idx):
    """rank0_metadata as arrays (the record slots of @hotstart)."""
    return {
        "obj_first_frame_idx": _pairs(meta["obj_first_frame_idx"]),
        "unmatched_count": _pairs({k: len(v) for k, v in meta["unmatched_frame_inds"].items()}),
        "trk_keep_alive": _pairs(dict(meta["trk_keep_alive"])),
        "overlap_pairs": np.array([[a, b, len(v)] for (a, b), v in
                                   sorted(meta["overlap_pair_to_frame_inds"].items())],
                                  np.int64).reshape(-1, 3),
        "removed_obj_ids": _ids(meta["removed_obj_ids"]),
        "suppressed_obj_ids": _ids(meta["suppressed_obj_ids"].get(frame_idx, set())),
    }


def dict_slots(prefix, d, conv=lambda v: v):
    """{obj_id: value} -> slots '<prefix>.<obj_id>'."""
    return [(f"{prefix}.{int(k)}", conv(v)) for k, v in sorted(d.items(), key=lambda kv: int(kv[0]))]

