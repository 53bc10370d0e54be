# SPDX-License-Identifier: Apache-2.0
"""A loaded model (either family) and the official builder functions.

    model = samc.build_sam2("configs/sam2.1/sam2.1_hiera_t.yaml", "sam2.1_hiera_tiny.pt")
    model = samc.Model("sam3.pt", vocab="bpe_simple_vocab_16e6.txt.gz")

One Model is loaded once and shared read-only by any number of predictors,
video predictors, generators and processors, on any number of threads.
"""
import os
import warnings

from . import _native
from ._native import ffi, lib

_FAMILIES = {lib.SAMC_FAMILY_SAM2: "sam2", lib.SAMC_FAMILY_SAM3: "sam3"}


class Model:
    """samc_model: a checkpoint loaded and checked (every key and shape).

    path: an official .pt, a .safetensors (the official key names or the
    transformers ones) or a parity dump .h5, of SAM 2 / 2.1 or SAM 3 (told by
    its keys). config: a preset ("sam2.1_hiera_t"), a .json of the model
    section, or None (detected from the weights). vocab: SAM 3's tokenizer
    vocabulary, bpe_simple_vocab_16e6.txt.gz. allow_nonfinite: load weights
    holding NaN/Inf instead of refusing them.
    """

    def __init__(self, path, config=None, vocab=None, allow_nonfinite=False):
        path = os.fspath(path)
        params = ffi.new("samc_model_params *", lib.samc_model_default_params())
        keep = [_native.text(config), _native.text(None if vocab is None else os.fspath(vocab))]
        params.config, params.vocab = keep
        params.allow_nonfinite = 1 if allow_nonfinite else 0
        out = ffi.new("samc_model **")
        err = _native.new_error()
        st = lib.samc_model_load(path.encode("utf-8"), params, out, err)
        _native.raise_for(st, err)
        self._ptr = ffi.gc(out[0], lib.samc_model_free)
        self.path = path

    @property
    def family(self):
        """"sam2" or "sam3"."""
        return _FAMILIES[lib.samc_model_family(self._ptr)]

    @property
    def config_name(self):
        return ffi.string(lib.samc_model_config_name(self._ptr)).decode()

    @property
    def image_size(self):
        """The model's input side (1024 for SAM 2, 1008 for SAM 3)."""
        return lib.samc_model_image_size(self._ptr)

    def need(self, family, what):
        if self.family != family:
            other = {"sam2": "SAM 2", "sam3": "SAM 3"}
            raise _native.arg_error(f"{what} needs a {other[family]} model; {self.path} is a {other[self.family]} "
                                    "model")

    def __repr__(self):
        return f"samc.Model({self.path!r}, family={self.family!r}, config={self.config_name!r})"


def _device(device):
    if device not in (None, "cpu") and not str(device).startswith("cpu"):
        warnings.warn(f"samc runs on the CPU; device={device!r} is ignored", stacklevel=3)


def preset_of(config_file):
    """An official config file name ("configs/sam2.1/sam2.1_hiera_t.yaml") as
    samc's preset ("sam2.1_hiera_t"); a .json or a preset name unchanged."""
    if config_file is None:
        return None
    s = os.fspath(config_file)
    if s.endswith(".json"):
        return s
    base = os.path.basename(s)
    if base.endswith((".yaml", ".yml")):
        return base.rsplit(".", 1)[0]
    return s


def _builder_args(mode, hydra_overrides_extra, apply_postprocessing):
    if mode != "eval":
        raise _native.arg_error(f"mode={mode!r}: samc runs inference only (mode='eval')")
    if hydra_overrides_extra:
        raise errors_unsupported("hydra_overrides_extra: give samc a .json config with the overrides applied "
                                 "(the YAML model section as JSON) instead")
    if not apply_postprocessing:
        raise errors_unsupported("apply_postprocessing=False: samc's presets are the builder's (dynamic "
                                 "multimask via stability); give a .json config without those overrides instead")


def errors_unsupported(msg):
    from .errors import SamcUnsupportedError

    return SamcUnsupportedError(msg, "unsupported", int(lib.SAMC_ERR_UNSUPPORTED))


def build_sam2(config_file=None, ckpt_path=None, device="cpu", mode="eval", hydra_overrides_extra=(),
               apply_postprocessing=True, **kwargs):
    """sam2.build_sam.build_sam2: the model of `ckpt_path` (config_file: the
    official config name, a samc preset or .json, or None to detect it).
    Extra keyword arguments: allow_nonfinite."""
    if ckpt_path is None:
        raise _native.arg_error("build_sam2: ckpt_path is required (samc has no random initialisation)")
    _device(device)
    _builder_args(mode, hydra_overrides_extra, apply_postprocessing)
    model = Model(ckpt_path, config=preset_of(config_file), **kwargs)
    model.need("sam2", "build_sam2")
    return model


def build_sam2_video_predictor(config_file=None, ckpt_path=None, device="cpu", mode="eval",
                               hydra_overrides_extra=(), apply_postprocessing=True, vos_optimized=False, **kwargs):
    """sam2.build_sam.build_sam2_video_predictor: a SAM2VideoPredictor on the
    model (keyword arguments: the predictor's, and impl / threads / overrides)."""
    from .video_predictor import SAM2VideoPredictor

    load = {k: kwargs.pop(k) for k in ("allow_nonfinite",) if k in kwargs}
    model = build_sam2(config_file, ckpt_path, device, mode, hydra_overrides_extra, apply_postprocessing, **load)
    return SAM2VideoPredictor(model, **kwargs)


def build_sam3_image_model(bpe_path=None, device="cpu", eval_mode=True, checkpoint_path=None, load_from_HF=False,
                           enable_segmentation=True, enable_inst_interactivity=False, compile=False, **kwargs):
    """sam3.model_builder.build_sam3_image_model: the SAM 3 model of
    `checkpoint_path` with the tokenizer vocabulary `bpe_path` (samc never
    downloads: docs/weights.md says where both come from)."""
    if checkpoint_path is None:
        raise _native.arg_error("build_sam3_image_model: checkpoint_path is required (samc does not download; "
                                "see docs/weights.md)")
    _device(device)
    if not eval_mode:
        raise _native.arg_error("eval_mode=False: samc runs inference only")
    if not enable_segmentation or enable_inst_interactivity:
        raise errors_unsupported("samc's SAM 3 is the image model with segmentation and without instance "
                                 "interactivity (enable_segmentation=True, enable_inst_interactivity=False)")
    model = Model(checkpoint_path, vocab=bpe_path, **kwargs)
    model.need("sam3", "build_sam3_image_model")
    return model


def version():
    """The version of the libsamc the package runs on ("0.2.0")."""
    return ffi.string(lib.samc_version()).decode()
