# SPDX-License-Identifier: Apache-2.0
"""Sam3Processor over samc_sam3_processor (include/samc_sam3.h).

    model = samc.build_sam3_image_model(bpe_path="bpe_simple_vocab_16e6.txt.gz", checkpoint_path="sam3.pt")
    processor = samc.Sam3Processor(model)
    state = processor.set_image(image)
    state = processor.set_text_prompt("a dog", state)
    state["masks"], state["boxes"], state["scores"]

As the official processor, the processor holds the options and the state
dict holds the image and the prompt; here each state owns one C processor
(its image features and prompt), so states are independent.

(SAM 3 video: Sam3VideoPredictor in sam3_video.py beside this module, on the
same Model.)
"""
import numpy as np

from . import _native, _options, arrays
from ._native import ffi, lib
from .model import Model, errors_unsupported


class _ImageFeatures:
    """state["backbone_out"]: the C processor holding the image's features
    and the prompt so far (opaque)."""

    def __init__(self, model, ptr, abort):
        self._model = model  # outlives the processor
        self._ptr = ptr
        self._abort = abort  # the processor's abort state (samc._native)
        self.threshold = None

    def __repr__(self):
        return "<samc SAM 3 image features>"


_RESULT_KEYS = ("masks_logits", "masks", "boxes", "scores")


class Sam3Processor:
    """sam3.model.sam3_image_processor.Sam3Processor on a samc SAM 3 Model.

    Official arguments: model, resolution (must be the model's, 1008),
    device (ignored: samc runs on the CPU), confidence_threshold. samc's, by
    keyword: impl, threads, overrides, progress (callable("encode", done,
    total) during set_image).
    """

    def __init__(self, model, resolution=None, device="cpu", confidence_threshold=0.5, *, impl=None, threads=0,
                 overrides=None, progress=None):
        if not isinstance(model, Model):
            raise _native.arg_error(f"model must be a samc.Model (samc.build_sam3_image_model(...)), got "
                                    f"{type(model).__name__}")
        model.need("sam3", "Sam3Processor")
        if resolution is not None and resolution != model.image_size:
            raise errors_unsupported(f"resolution={resolution}: the model's input size is {model.image_size}")
        self.model = model
        self.resolution = model.image_size
        self.device = "cpu"
        self.confidence_threshold = float(confidence_threshold)
        self._impl = impl
        self._threads = _options.check_threads(threads)
        self._overrides = _options.overrides_list(overrides)
        self._progress = progress

    def _new_processor(self):
        params = ffi.new("samc_sam3_processor_params *", lib.samc_sam3_processor_default_params())
        impl = _native.text(self._impl)
        params.impl = impl
        params.n_threads = self._threads
        params.threshold = self.confidence_threshold
        _options.progress_args(params, self._progress)
        abort = _native.abort_args(params)
        out = ffi.new("samc_sam3_processor **")
        err = _native.new_error()
        _native.raise_for(lib.samc_sam3_processor_new(self.model._ptr, params, out, err), err)
        ptr = ffi.gc(out[0], lib.samc_sam3_processor_free)
        _options.apply_overrides(lib.samc_sam3_processor_override, ptr, self._overrides)
        feats = _ImageFeatures(self.model, ptr, abort)
        feats.threshold = self.confidence_threshold
        return feats

    # ---- the official calls -----------------------------------------------------------

    def set_image(self, image, state=None):
        """The image's features: (H, W, 3) uint8 RGB or a PIL image. Returns
        the state (a new dict when state is None)."""
        if state is None:
            state = {}
        img = arrays.image(image)
        feats = state.get("backbone_out")
        if not isinstance(feats, _ImageFeatures):
            feats = self._new_processor()
        self.reset_all_prompts(state)
        state.pop("backbone_out", None)  # until the new image is set
        _native.call(lib.samc_sam3_processor_set_image, feats._ptr, _native.ptr(img, "uint8_t[]"), img.shape[0],
                     img.shape[1], abort=feats._abort, progress=self._progress)
        state["original_height"], state["original_width"] = img.shape[0], img.shape[1]
        state["backbone_out"] = feats
        return state

    def set_image_batch(self, images, state=None):
        raise errors_unsupported("Sam3Processor.set_image_batch: set each image on its own state")

    def set_text_prompt(self, prompt, state):
        """Run the detector on a text (the boxes given so far kept)."""
        feats = self._features(state, "set_text_prompt")
        if not isinstance(prompt, str) or not prompt:
            raise _native.arg_error(f"the text prompt must be a non-empty string, got {prompt!r}")
        self._sync_threshold(feats)
        _native.call(lib.samc_sam3_processor_set_text, feats._ptr, prompt.encode("utf-8"), abort=feats._abort)
        return self._results(state, feats)

    def add_geometric_prompt(self, box, label, state):
        """Add a box (centre x, centre y, width, height normalised to [0, 1];
        label True: positive) and run the detector."""
        feats = self._features(state, "add_geometric_prompt")
        b = arrays.small(box, np.float32, "box").reshape(-1)
        if b.shape != (4,):
            raise _native.arg_error(f"box must be 4 values (cx, cy, w, h normalised), got {b.size}")
        self._sync_threshold(feats)
        _native.call(lib.samc_sam3_processor_add_box, feats._ptr, ffi.from_buffer("float[]", b), bool(label),
                     abort=feats._abort)
        state["geometric_prompt"] = True
        return self._results(state, feats)

    def reset_all_prompts(self, state):
        """Remove the text, the boxes and the results."""
        feats = state.get("backbone_out")
        if isinstance(feats, _ImageFeatures):
            lib.samc_sam3_processor_reset(feats._ptr)
        for key in ("geometric_prompt",) + _RESULT_KEYS:
            state.pop(key, None)

    def set_confidence_threshold(self, threshold, state=None):
        """Change the threshold; a state with results is filtered again."""
        self.confidence_threshold = float(threshold)
        if state is not None and "boxes" in state:
            feats = self._features(state, "set_confidence_threshold")
            self._sync_threshold(feats)
            return self._results(state, feats)
        return state

    # ---- helpers -------------------------------------------------------------------------

    @staticmethod
    def _features(state, what):
        if not isinstance(state, dict) or not isinstance(state.get("backbone_out"), _ImageFeatures):
            raise ValueError(f"You must call set_image before {what}")
        return state["backbone_out"]

    def _sync_threshold(self, feats):
        if feats.threshold != self.confidence_threshold:
            _native.call(lib.samc_sam3_processor_set_threshold, feats._ptr, self.confidence_threshold,
                         abort=feats._abort)
            feats.threshold = self.confidence_threshold

    @staticmethod
    def _results(state, feats):
        """The official state keys: masks_logits (M, 1, H, W) probabilities,
        masks (M, 1, H, W) bool (> 0.5), boxes (M, 4) x0 y0 x1 y1 pixels,
        scores (M,); copies, as the processor reuses its buffers."""
        r = ffi.new("samc_sam3_results *")
        err = _native.new_error()
        _native.raise_for(lib.samc_sam3_processor_results(feats._ptr, r, err), err)
        probs = _native.copy_out(r.masks, (r.n, 1, r.h, r.w))
        state["masks_logits"] = arrays.tensor(probs)
        state["masks"] = arrays.tensor(probs > np.float32(0.5))
        state["boxes"] = arrays.tensor(_native.copy_out(r.boxes, (r.n, 4)))
        state["scores"] = arrays.tensor(_native.copy_out(r.scores, (r.n,)))
        return state
