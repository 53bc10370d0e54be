# SPDX-License-Identifier: Apache-2.0
"""Build an official SAM 2 / 2.1 model without hydra, with seeded random
weights or a real checkpoint.  Shared by dump_sam2.py and make_checkpoint.py
so that the same (config, overrides, seed) always gives bit-identical weights.

The official code is imported from a checkout given by --sam2-src or the
SAM2_SRC environment variable (the repository root, or its `sam2` package).
"""

import argparse
import copy
import importlib
import json
import os
import re
import subprocess
import sys

import torch
import yaml

import sam2_shims

# build_sam.py: build_sam2(..., apply_postprocessing=True) appends these three
# hydra overrides after the caller's (so they win).
BUILDER_POSTPROCESSING_OVERRIDES = [
    "model.sam_mask_decoder_extra_args.dynamic_multimask_via_stability=true",
    "model.sam_mask_decoder_extra_args.dynamic_multimask_stability_delta=0.05",
    "model.sam_mask_decoder_extra_args.dynamic_multimask_stability_thresh=0.98",
]

# build_sam.py: build_sam2_video_predictor(..., apply_postprocessing=True,
# vos_optimized=False): the target class override comes first (before the
# caller's overrides), then the same three as above, then these two.
VIDEO_TARGET_OVERRIDE = "model._target_=sam2.sam2_video_predictor.SAM2VideoPredictor"
VIDEO_POSTPROCESSING_OVERRIDES = [
    "model.binarize_mask_from_pts_for_mem_enc=true",
    "model.fill_hole_area=8",
]


# --------------------------------------------------------------------------
# Locating and importing the official code
# --------------------------------------------------------------------------

def resolve_sam2_src(path=None):
    """Return (repo_root, package_dir) of the official checkout."""
    path = path or os.environ.get("SAM2_SRC")
    if not path:
        raise SystemExit("give the official sam2 checkout: --sam2-src or SAM2_SRC")
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "sam2", "modeling", "sam2_base.py")):
        return path, os.path.join(path, "sam2")
    if os.path.isfile(os.path.join(path, "modeling", "sam2_base.py")):
        return os.path.dirname(path), path
    raise SystemExit(f"{path}: not a sam2 checkout")


def import_sam2(src=None):
    """Install the shims and import the official `sam2` package from src."""
    root, pkg = resolve_sam2_src(src)
    sam2_shims.install()
    if root not in sys.path:
        sys.path.insert(0, root)
    import sam2
    got = os.path.dirname(os.path.abspath(sam2.__file__))
    if got != pkg:
        raise SystemExit(f"imported sam2 from {got}, expected {pkg}")
    return root, pkg


def sam2_commit(root, override=None):
    """Commit of the checkout: --sam2-commit / SAM2_COMMIT if given, else
    `git rev-parse HEAD` in the checkout; fails rather than guess."""
    commit = override or os.environ.get("SAM2_COMMIT")
    if commit:
        return commit
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"{root} is not a git checkout: pass --sam2-commit "
                         "(or SAM2_COMMIT) with the commit it was taken from")


# --------------------------------------------------------------------------
# Config: YAML with OmegaConf's number rules, dotted overrides
# --------------------------------------------------------------------------

class _ConfigLoader(yaml.SafeLoader):
    """PyYAML follows YAML 1.1, where `1e-6` (no dot) is a string.  OmegaConf
    (what hydra uses) reads it as a float, and CXBlock's
    layer_scale_init_value: 1e-6 depends on that.  Add that float form."""


_ConfigLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"))


def parse_yaml_value(text):
    return yaml.load(text, Loader=_ConfigLoader)


def config_path(name, pkg_dir):
    """'sam2.1_hiera_t' -> <pkg>/configs/sam2.1/sam2.1_hiera_t.yaml,
    'sam2_hiera_s' -> <pkg>/configs/sam2/sam2_hiera_s.yaml; a path relative
    to the package (as build_sam2 takes) or to the cwd also works."""
    candidates = [name, os.path.join(pkg_dir, name)]
    stem = name[:-5] if name.endswith(".yaml") else name
    family = "sam2.1" if stem.startswith("sam2.1_") else "sam2"
    candidates.append(os.path.join(pkg_dir, "configs", family, stem + ".yaml"))
    for c in candidates:
        if os.path.isfile(c):
            return os.path.abspath(c)
    raise SystemExit(f"config {name!r} not found (tried {candidates})")


def load_config(path):
    with open(path) as f:
        return yaml.load(f, Loader=_ConfigLoader)


def apply_override(cfg, override):
    """'a.b.c=value': set (creating dicts as needed, like hydra's `++`);
    value is parsed as YAML (numbers, bools, null, [lists], {maps})."""
    if "=" not in override:
        raise SystemExit(f"override {override!r}: expected key=value")
    key, text = override.split("=", 1)
    parts = key.strip().split(".")
    node = cfg
    for p in parts[:-1]:
        if node.get(p) is None:
            node[p] = {}
        node = node[p]
        if not isinstance(node, dict):
            raise SystemExit(f"override {override!r}: {p} is not a mapping")
    node[parts[-1]] = parse_yaml_value(text)


def make_config(name, overrides=(), apply_postprocessing=True, pkg_dir=None,
                video=False):
    """Full YAML dict after the user's overrides and then the builder's
    (build_sam2, or build_sam2_video_predictor when video=True)."""
    cfg = load_config(config_path(name, pkg_dir))
    if video:
        apply_override(cfg, VIDEO_TARGET_OVERRIDE)
    for o in overrides:
        apply_override(cfg, o)
    if apply_postprocessing:
        for o in BUILDER_POSTPROCESSING_OVERRIDES:
            apply_override(cfg, o)
        if video:
            for o in VIDEO_POSTPROCESSING_OVERRIDES:
                apply_override(cfg, o)
    return cfg


# --------------------------------------------------------------------------
# Instantiation (hydra.utils.instantiate, _recursive_=True)
# --------------------------------------------------------------------------

def _locate(target):
    module, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def instantiate(node):
    """Children first, then the `_target_` callable with the remaining keys
    as kwargs.  Keys starting with '_' are hydra directives, not kwargs.
    Plain containers are passed as Python lists/dicts (hydra would pass
    ListConfig/DictConfig; the official classes treat both alike)."""
    if isinstance(node, list):
        return [instantiate(v) for v in node]
    if not isinstance(node, dict):
        return node
    kwargs = {k: instantiate(v) for k, v in node.items() if not k.startswith("_")}
    if "_target_" not in node:
        return kwargs
    return _locate(node["_target_"])(**kwargs)


# --------------------------------------------------------------------------
# Seeded random weights
# --------------------------------------------------------------------------

def _fan_in(module, weight):
    """Inputs summed into one output of a Linear / Conv / ConvTranspose."""
    if isinstance(module, torch.nn.ConvTranspose2d):
        # weight (in, out/groups, kh, kw); each output pixel sees in*kh*kw/(sh*sw)
        kh, kw = weight.shape[2:]
        sh, sw = module.stride
        return max(1, weight.shape[0] * kh * kw // (sh * sw))
    fan = 1
    for d in weight.shape[1:]:
        fan *= d
    return fan


# Last layer of each mask-token hypernetwork MLP: its gain sets the mask logit
# scale.  With 1/sqrt(fan_in) the logits stay within about +-4 and the
# stability score (band +-0.05) sits far below the 0.98 threshold; gain 8 gives
# magnitudes like the real model's (up to ~30, so the [-32, 32] clamp of the
# returned low-res logits can act) and stability scores on both sides of 0.98.
HYPERNET_OUT = re.compile(r"output_hypernetworks_mlps\.\d+\.layers\.2\.weight$")
HYPERNET_GAIN = 8.0


def init_rule(key, module, pname):
    """(kind, scale) for one state_dict entry.  Kinds: 'normal' N(0, scale),
    'one_plus' 1 + N(0, scale), 'uniform' U(scale[0], scale[1]).
    scale ("fan_in", g) means g/sqrt(fan_in)."""
    from sam2.modeling.sam2_utils import LayerNorm2d
    norms = (torch.nn.LayerNorm, LayerNorm2d)
    if pname == "positional_encoding_gaussian_matrix":
        return "normal", 1.0                    # as built: randn * scale(1.0)
    if isinstance(module, norms):
        return ("one_plus", 0.1) if pname == "weight" else ("normal", 0.05)
    if pname == "gamma":                        # CXBlock layer scale
        return "uniform", (0.1, 1.0)
    if isinstance(module, torch.nn.Embedding):  # prompt / output tokens
        return "normal", 1.0
    if pname in ("pos_embed", "pos_embed_window"):
        return "normal", 0.5
    if pname == "bias":
        return "normal", 0.05
    if HYPERNET_OUT.search(key):
        return "normal", ("fan_in", HYPERNET_GAIN)
    if pname == "weight" and isinstance(module, (torch.nn.Linear, torch.nn.Conv2d,
                                                 torch.nn.ConvTranspose2d)):
        return "normal", ("fan_in", 1.0)        # N(0, 1/fan_in)
    # SAM2Base's own parameters: no_mem_embed, no_mem_pos_enc, no_obj_ptr,
    # maskmem_tpos_enc, no_obj_embed_spatial.
    return "normal", 0.5


def randomize_weights(model, seed):
    """Give every state_dict entry a deterministic random value, drawn from
    one torch.Generator seeded with `seed`, in state_dict key order."""
    gen = torch.Generator().manual_seed(seed)
    modules = dict(model.named_modules())
    state = model.state_dict()
    with torch.no_grad():
        for key, tensor in state.items():
            mod_name, _, pname = key.rpartition(".")
            module = modules[mod_name]
            kind, scale = init_rule(key, module, pname)
            if kind == "uniform":
                lo, hi = scale
                value = lo + (hi - lo) * torch.rand(tensor.shape, generator=gen)
            else:
                if isinstance(scale, tuple):     # ("fan_in", gain)
                    scale = scale[1] * _fan_in(module, tensor) ** -0.5
                value = torch.randn(tensor.shape, generator=gen) * scale
                if kind == "one_plus":
                    value = value + 1.0
            tensor.copy_(value.to(tensor.dtype))


def load_checkpoint(model, path):
    """As build_sam.py: _load_checkpoint: strict load of ["model"]."""
    sd = torch.load(path, map_location="cpu")["model"]
    model.load_state_dict(sd, strict=True)


# --------------------------------------------------------------------------
# Command-line glue
# --------------------------------------------------------------------------

def add_model_args(p: argparse.ArgumentParser):
    g = p.add_argument_group("model")
    g.add_argument("--sam2-src", help="official sam2 checkout (default: $SAM2_SRC)")
    g.add_argument("--sam2-commit", help="commit of that checkout if it has no .git")
    g.add_argument("--config", default="sam2.1_hiera_t",
                   help="config name (sam2.1_hiera_t, sam2_hiera_s, ...) or YAML path")
    g.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="dotted override, value parsed as YAML "
                   "(repeatable), e.g. model.image_encoder.trunk.embed_dim=16")
    g.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    g.add_argument("--checkpoint", help="load this .pt (['model'], strict) "
                   "instead of random weights")
    g.add_argument("--no-postprocessing", action="store_true",
                   help="do not apply build_sam2's dynamic-multimask overrides")
    g.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")


# Constructor arguments that are sub-modules (nested `_target_` sections),
# not options.
MODULE_ARGS = ("image_encoder", "memory_attention", "memory_encoder")


def complete_model_options(model_cfg):
    """Add every scalar constructor argument of the model's class (for the
    video predictor: SAM2VideoPredictor's own and SAM2Base's) that the YAML
    leaves out, with the constructor's default, after the keys already there.
    The model built from the section is the same (the values are the
    defaults); a reader finds every option written out.  Returns the keys
    added, in order."""
    import inspect
    cls = _locate(model_cfg["_target_"])
    added = []
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None or klass is torch.nn.Module or klass is object:
            continue
        for name, prm in inspect.signature(init).parameters.items():
            if name == "self" or prm.kind in (prm.VAR_KEYWORD, prm.VAR_POSITIONAL):
                continue
            if name in MODULE_ARGS or name in model_cfg:
                continue
            if prm.default is inspect.Parameter.empty:
                raise SystemExit(f"{klass.__name__}({name}) has no default and no config value")
            model_cfg[name] = prm.default
            added.append(name)
    return added


class Built:
    """A model plus what produced it."""

    def __init__(self, model, model_cfg, config_file, source, defaults_added=()):
        self.model = model
        self.model_cfg = model_cfg        # the `model` section, overrides applied
        self.config_file = config_file
        self.source = source              # "facebookresearch/sam2@<commit>"
        self.defaults_added = list(defaults_added)  # keys filled from constructor defaults

    @property
    def config_json(self):
        return json.dumps(self.model_cfg)


def build_from_args(args, video=False):
    """Import the official code, build the model, set weights, eval, fp32.
    video=True builds as build_sam2_video_predictor (SAM2VideoPredictor) and
    writes every constructor option into the model section
    (complete_model_options)."""
    torch.set_num_threads(args.threads)
    root, pkg = import_sam2(args.sam2_src)
    source = "facebookresearch/sam2@" + sam2_commit(root, args.sam2_commit)
    cfg_file = config_path(args.config, pkg)
    cfg = make_config(args.config, args.overrides,
                      apply_postprocessing=not args.no_postprocessing, pkg_dir=pkg,
                      video=video)
    defaults_added = complete_model_options(cfg["model"]) if video else []
    model_cfg = copy.deepcopy(cfg["model"])
    model = instantiate(cfg["model"])
    if args.checkpoint:
        load_checkpoint(model, args.checkpoint)
    else:
        randomize_weights(model, args.seed)
    model = model.float().eval()
    return Built(model, model_cfg, cfg_file, source, defaults_added)


def make_image_predictor(model, max_hole_area=0.0, max_sprinkle_area=0.0):
    """SAM2ImagePredictor from the official code.  Its _bb_feat_sizes are
    hard-coded for image_size 1024; set them from the model's image_size
    (S/4, S/8, S/16), which is what they are at 1024."""
    from sam2.sam2_image_predictor import SAM2ImagePredictor
    if max_hole_area > 0 or max_sprinkle_area > 0:
        sam2_shims.install_connected_components()
    pred = SAM2ImagePredictor(model, max_hole_area=max_hole_area,
                              max_sprinkle_area=max_sprinkle_area)
    s = model.image_size
    pred._bb_feat_sizes = [(s // 4, s // 4), (s // 8, s // 8), (s // 16, s // 16)]
    return pred
