# SPDX-License-Identifier: Apache-2.0
"""SAM 3 model building shared by dump_sam3.py and make_sam3_checkpoint.py.

The model is described by a `_target_` tree (PARITY_DUMP_FORMAT.md, "SAM 3"):
it is *recorded* from the official builder (sam3/model_builder.py) by running
build_sam3_image_model / build_sam3_video_model with every class it
constructs replaced by a recorder, so the tree holds exactly the arguments the
`_create_*` functions pass.  The model is then built by instantiating that tree
(children first, then the class), so the JSON written to the dump is both the
recipe and the config.
"""

import argparse
import copy
import gzip
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import types

import torch

import sam3_shims

BUILD_IMAGE_KWARGS = dict(device="cpu", eval_mode=True, checkpoint_path=None,
                          load_from_HF=False, enable_segmentation=True,
                          enable_inst_interactivity=False, compile=False)
TOKENIZER = "sam3.model.tokenizer_ve.SimpleTokenizer"
BPE_REL = os.path.join("sam3", "assets", "bpe_simple_vocab_16e6.txt.gz")


# --------------------------------------------------------------------------
# Locating and importing the official code
# --------------------------------------------------------------------------

def resolve_sam3_src(path=None):
    """(repo_root, package_dir) of the official sam3 source tree."""
    path = path or os.environ.get("SAM3_SRC")
    if not path:
        raise SystemExit("give the official sam3 source: --sam3-src or SAM3_SRC")
    path = os.path.abspath(path)
    if os.path.isfile(os.path.join(path, "sam3", "model_builder.py")):
        return path, os.path.join(path, "sam3")
    if os.path.isfile(os.path.join(path, "model_builder.py")):
        return os.path.dirname(path), path
    raise SystemExit(f"{path}: not a sam3 source tree")


def import_sam3(src=None, ftfy_src=None):
    """Install the shims, import sam3.model_builder from src, patch the two
    CPU-hostile constructors.  Returns (root, pkg, model_builder module)."""
    root, pkg = resolve_sam3_src(src)
    sam3_shims.install(ftfy_src or os.environ.get("FTFY_SRC"))
    if root not in sys.path:
        sys.path.insert(0, root)
    import sam3
    got = os.path.dirname(os.path.abspath(sam3.__file__))
    if got != pkg:
        raise SystemExit(f"imported sam3 from {got}, expected {pkg}")
    mb = importlib.import_module("sam3.model_builder")
    sam3_shims.patch_cuda_allocations()
    return root, pkg, mb


def source_commit(root, override=None, env="SAM3_COMMIT"):
    commit = override or os.environ.get(env)
    if commit:
        return commit
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise SystemExit(f"{root} is not a git checkout: pass --sam3-commit "
                         "(or SAM3_COMMIT) with the commit it was taken from")


def ftfy_version():
    try:
        import ftfy
        return getattr(ftfy, "__version__", "?")
    except ImportError:
        return "absent"


# --------------------------------------------------------------------------
# Recording the builder's constructor calls as a _target_ tree
# --------------------------------------------------------------------------

class _Node:
    """What a recorded constructor call returns: the class and its bound
    arguments, in call order (positional ones named after the parameters)."""

    def __init__(self, cls, args, kwargs):
        self.cls = cls
        sig = inspect.signature(cls.__init__)
        params = [p for p in sig.parameters.values() if p.name != "self"]
        named = {}
        for p, a in zip(params, args):
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise SystemExit(f"{cls.__name__}: positional *args cannot be named")
            named[p.name] = a
        if len(args) > len(params):
            raise SystemExit(f"{cls.__name__}: too many positional arguments")
        for k, v in kwargs.items():
            if k in named:
                raise SystemExit(f"{cls.__name__}: argument {k} given twice")
            named[k] = v
        self.kwargs = named

    # the builders call these on the finished model
    def eval(self):
        return self

    def to(self, *args, **kwargs):
        return self

    def cuda(self):
        return self


def target_name(cls):
    """_target_ of a class: its defining module path; torch.nn classes as
    torch.nn.<Name> (the format's convention)."""
    if cls.__module__.startswith("torch.nn.modules"):
        if getattr(torch.nn, cls.__name__, None) is cls:
            return "torch.nn." + cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _recorder(cls):
    def make(*args, **kwargs):
        return _Node(cls, args, kwargs)
    return make


class _NnProxy:
    """Stands in for `nn` inside model_builder: classes become recorders."""

    def __getattr__(self, name):
        obj = getattr(torch.nn, name)
        return _recorder(obj) if isinstance(obj, type) else obj


def _to_tree(value, seen):
    if isinstance(value, _Node):
        if id(value) in seen:
            raise SystemExit(f"the builder passes one {value.cls.__name__} instance to two "
                             "constructors; a _target_ tree cannot express that")
        seen.add(id(value))
        node = {"_target_": target_name(value.cls)}
        for k, v in value.kwargs.items():
            if node["_target_"] == TOKENIZER and k == "bpe_path":
                continue   # the format: a tokenizer node without its path
            node[k] = _to_tree(v, seen)
        return node
    if isinstance(value, (list, tuple)):
        return [_to_tree(v, seen) for v in value]
    if isinstance(value, dict):
        return {k: _to_tree(v, seen) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise SystemExit(f"builder argument of type {type(value).__name__} cannot go into JSON: "
                     f"{value!r}")


def record_tree(mb, builder, **kwargs):
    """Run mb.<builder>(**kwargs) with every class it names replaced by a
    recorder; return the _target_ tree of what it would have built."""
    saved = {}
    for name, obj in list(vars(mb).items()):
        if isinstance(obj, type) and issubclass(obj, (torch.nn.Module, object)) and (
                obj.__module__.startswith("sam3.") or obj.__module__.startswith("torch.nn")):
            saved[name] = obj
            setattr(mb, name, _recorder(obj))
    saved["nn"] = mb.nn
    mb.nn = _NnProxy()
    try:
        root = getattr(mb, builder)(**kwargs)
    finally:
        for name, obj in saved.items():
            setattr(mb, name, obj)
    if not isinstance(root, _Node):
        raise SystemExit(f"{builder} did not return a recorded model")
    return _to_tree(root, set())


def image_tree(mb, bpe_path):
    """The tree of build_sam3_image_model(eval, segmentation on,
    instance interactivity off) on the CPU."""
    return record_tree(mb, "build_sam3_image_model", bpe_path=bpe_path, **BUILD_IMAGE_KWARGS)


def video_tree(mb, bpe_path):
    """The tree of build_sam3_video_model (the model `sam3.pt` is the
    state_dict of: detector + tracker)."""
    return record_tree(mb, "build_sam3_video_model", checkpoint_path=None, load_from_HF=False,
                       bpe_path=bpe_path, device="cpu", compile=False)


# --------------------------------------------------------------------------
# Overrides and instantiation
# --------------------------------------------------------------------------

def parse_value(text):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        low = text.lower()
        if low in ("true", "false"):
            return low == "true"
        if low in ("none", "null"):
            return None
        return text


def apply_override(tree, override, allow_new=False):
    """'a.b.c=VALUE' (VALUE parsed as JSON; bare words are strings).  List
    items are addressed by index ('x.0.y').  A key the builder does not pass
    is refused unless allow_new (the format keeps only the builder's
    arguments)."""
    key, eq, text = override.partition("=")
    if not eq:
        raise SystemExit(f"--set {override!r}: expected KEY=VALUE")
    parts = key.split(".")
    node = tree
    for i, p in enumerate(parts[:-1]):
        if isinstance(node, list):
            node = node[int(p)]
        elif isinstance(node, dict) and isinstance(node.get(p), (dict, list)):
            node = node[p]
        else:
            raise SystemExit(f"--set {key}: {'.'.join(parts[:i + 1])} is not a node of the tree")
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = parse_value(text)
        return
    if last not in node and not allow_new:
        raise SystemExit(f"--set {key}: the builder passes no argument {last!r} there "
                         "(use --set-new to add one)")
    if isinstance(node.get(last), dict) and "_target_" in node[last]:
        raise SystemExit(f"--set {key}: that is a module node; set its arguments instead")
    node[last] = parse_value(text)


def _locate(target):
    module, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def instantiate(node, bpe_path):
    """Children first, then `_target_(**kwargs)`; the tokenizer node gets the
    vocabulary path (the tree leaves it out)."""
    if isinstance(node, list):
        return [instantiate(v, bpe_path) for v in node]
    if not isinstance(node, dict):
        return node
    kwargs = {k: instantiate(v, bpe_path) for k, v in node.items() if k != "_target_"}
    if "_target_" not in node:
        return kwargs
    if node["_target_"] == TOKENIZER:
        kwargs["bpe_path"] = bpe_path
    return _locate(node["_target_"])(**kwargs)


# --------------------------------------------------------------------------
# Seeded random weights
# --------------------------------------------------------------------------

def _fan_in(module, weight):
    """Inputs summed into one output of a Linear / Conv / ConvTranspose /
    packed attention projection."""
    if isinstance(module, torch.nn.ConvTranspose2d):
        kh, kw = weight.shape[2:]
        sh, sw = module.stride
        return max(1, weight.shape[0] * kh * kw // (sh * sw))
    fan = 1
    for d in weight.shape[1:]:
        fan *= d
    return fan


def init_rule(key, module, pname, tensor):
    """(kind, scale): 'normal' N(0, scale), 'one_plus' 1 + N(0, scale), or
    'keep' (computed buffers); scale ('fan_in', g) = g / sqrt(fan_in)."""
    from sam3.model.model_misc import LayerNorm2d
    if tensor.is_complex():
        return "keep", None                      # RoPE freqs_cis: computed from the config
    if isinstance(module, (torch.nn.LayerNorm, torch.nn.GroupNorm, LayerNorm2d)):
        return ("one_plus", 0.1) if pname == "weight" else ("normal", 0.05)
    if isinstance(module, torch.nn.Embedding):
        return "normal", 1.0
    if pname == "positional_encoding_gaussian_matrix":
        return "normal", 1.0                     # as built (tracker prompt encoder)
    if pname in ("pos_embed", "positional_embedding"):
        return "normal", 0.5                     # ViT abs. positions; text positions (torch.empty)
    if pname == "text_projection":
        return "normal", ("fan_in_rows", 1.0)    # [width, out] used as x @ P (torch.empty)
    if pname in ("bias", "in_proj_bias"):
        return "normal", 0.05
    if pname == "in_proj_weight" or (pname == "weight" and isinstance(
            module, (torch.nn.Linear, torch.nn.Conv2d, torch.nn.ConvTranspose2d))):
        return "normal", ("fan_in", 1.0)
    if pname == "gamma":                         # LayerScale / CXBlock (tracker)
        return "one_plus", 0.1
    return "normal", 0.5                         # any other parameter (tracker embeddings)


def randomize_weights(model, seed):
    """One torch.Generator seeded with `seed`; every state_dict entry in key
    order gets one draw of its shape (computed RoPE tables are kept)."""
    gen = torch.Generator().manual_seed(seed)
    modules = dict(model.named_modules())
    with torch.no_grad():
        for key, tensor in model.state_dict().items():
            mod_name, _, pname = key.rpartition(".")
            module = modules[mod_name]
            kind, scale = init_rule(key, module, pname, tensor)
            if kind == "keep":
                continue
            if isinstance(scale, tuple):
                if scale[0] == "fan_in_rows":
                    scale = scale[1] * tensor.shape[0] ** -0.5
                else:
                    scale = scale[1] * _fan_in(module, tensor) ** -0.5
            value = torch.randn(tensor.shape, generator=gen) * scale
            if kind == "one_plus":
                value = value + 1.0
            tensor.copy_(value.to(tensor.dtype))


def apply_nudges(model, nudges):
    """--nudge KEY=DELTA: add DELTA to every element of one weight after the
    seeded draw (documented per fixture; e.g. a scoring bias)."""
    state = model.state_dict()
    with torch.no_grad():
        for n in nudges:
            key, _, delta = n.partition("=")
            if key not in state:
                raise SystemExit(f"--nudge {key}: no such state_dict entry")
            state[key].add_(float(delta))


# --------------------------------------------------------------------------
# Command-line glue
# --------------------------------------------------------------------------

def add_model_args(p: argparse.ArgumentParser):
    g = p.add_argument_group("model")
    g.add_argument("--sam3-src", help="official sam3 source tree (default: $SAM3_SRC)")
    g.add_argument("--sam3-commit", help="commit it was taken from (required without .git)")
    g.add_argument("--ftfy-src", help="directory holding the real ftfy package "
                   "(default: $FTFY_SRC, else an installed ftfy)")
    g.add_argument("--bpe", help="BPE vocabulary (default: the official "
                   "sam3/assets/bpe_simple_vocab_16e6.txt.gz)")
    g.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="change one value of the _target_ tree, e.g. "
                   "backbone.visual.trunk.embed_dim=64 (value parsed as JSON; repeatable)")
    g.add_argument("--set-new", dest="new_overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="as --set, but may add an argument the "
                   "builder does not pass")
    g.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    g.add_argument("--nudge", action="append", default=[], metavar="KEY=DELTA",
                   help="add DELTA to a weight after seeding (repeatable)")
    g.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")


class Built:
    def __init__(self, model, tree, source, bpe_path):
        self.model = model
        self.tree = tree
        self.source = source
        self.bpe_path = bpe_path

    @property
    def config_json(self):
        return json.dumps(self.tree)


def fp32_cpu_settings(threads):
    torch.set_num_threads(threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_default_dtype(torch.float32)


def build_tree_from_args(args, video=False):
    root, pkg, mb = import_sam3(args.sam3_src, args.ftfy_src)
    source = "facebookresearch/sam3@" + source_commit(root, args.sam3_commit)
    bpe = os.path.abspath(args.bpe or os.path.join(root, BPE_REL))
    tree = video_tree(mb, bpe) if video else image_tree(mb, bpe)
    for o in args.overrides:
        apply_override(tree, o)
    for o in args.new_overrides:
        apply_override(tree, o, allow_new=True)
    return tree, source, bpe


def build_from_args(args, video=False):
    """Record the official builder's tree, apply --set, instantiate, seed the
    weights, eval, fp32, TF32 off."""
    fp32_cpu_settings(args.threads)
    tree, source, bpe = build_tree_from_args(args, video)
    model = instantiate(copy.deepcopy(tree), bpe)
    randomize_weights(model, args.seed)
    apply_nudges(model, args.nudge)
    model = model.float().eval()
    return Built(model, tree, source, bpe)


def read_bpe_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    gzip.decompress(data)   # a readable gzip, or fail here
    return data
