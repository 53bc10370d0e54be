# SPDX-License-Identifier: Apache-2.0
"""Write the released SAM 3 image model's `_target_` tree (the built-in
preset of core/models/sam3/sam3_preset.c) by recording the official builder
(build_sam3_image_model, eval, segmentation on, no instance interactivity);
with --video the video model's (build_sam3_video_model: the detector, the
tracker and the loop, with the loop's and the tracker's constructor defaults
filled in as the sam3_video dumps record them; the built-in preset of
core/models/sam3/sam3_video_preset.c).

    /usr/bin/python3 tools/sam3_preset.py --sam3-src /work/ext/sam3 \\
        --sam3-commit 99d02f28c8d3 > released.json
    /usr/bin/python3 tools/sam3_preset.py ... --c core/models/sam3/sam3_preset.c
    /usr/bin/python3 tools/sam3_preset.py ... --video --c core/models/sam3/sam3_video_preset.c
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sam3_build  # noqa: E402
import sam3_video_config  # noqa: E402

C_HEAD = """/* SPDX-License-Identifier: Apache-2.0 */
/* sam3_preset.c - the released SAM 3 image model's `_target_` tree (what
 * build_sam3_image_model passes, recorded from %s by
 * tools/sam3_preset.py --c; do not edit by hand). sam3.pt holds the weights
 * of exactly this tree under "detector.". */
#include "core/models/sam3/sam3_model.h"

#include "core/base/error.h"

const char samc_sam3_released_config_json[] =
"""

C_HEAD_VIDEO = """/* sam3_video_preset.c - the released SAM 3 video model's `_target_` tree
 * (what build_sam3_video_model passes, with the loop's and the tracker's
 * constructor defaults filled in; recorded from %s by
 * tools/sam3_preset.py --video --c; do not edit by hand). sam3.pt holds the
 * weights of exactly this tree ("detector." and "tracker." keys). */
#include "core/models/sam3/sam3_video_config.h"

const char samc_sam3_released_video_config_json[] =
"""


def _ftfy_placeholder():
    """Recording the tree constructs nothing (the tokenizer included), so no
    text is ever fixed: without --ftfy-src a placeholder module satisfies the
    import, and any call to it fails loudly."""
    import types

    def refuse(*a, **k):
        raise SystemExit("sam3_preset.py: ftfy was called while recording the tree")

    mod = types.ModuleType("ftfy")
    mod.fix_text = refuse
    mod.__version__ = "placeholder"
    sys.modules["ftfy"] = mod


def _tqdm_placeholder():
    """sam2_utils and the tracking predictor import tqdm (never called here)."""
    try:
        import tqdm  # noqa: F401
    except ImportError:
        import types
        for name in ("tqdm", "tqdm.auto"):
            mod = types.ModuleType(name)
            mod.tqdm = lambda it=None, *a, **k: it
            sys.modules[name] = mod


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sam3_build.add_model_args(p)
    p.add_argument("--c", help="write the C source of the preset to this path")
    p.add_argument("--video", action="store_true", help="the video model's tree (build_sam3_video_model)")
    args = p.parse_args()
    if not (args.ftfy_src or os.environ.get("FTFY_SRC")):
        _ftfy_placeholder()
    _tqdm_placeholder()
    tree, source, _ = sam3_build.build_tree_from_args(args, video=args.video)
    if args.video:
        sam3_video_config.fill_video_defaults(tree)
    text = json.dumps(tree, sort_keys=True)
    if not args.c:
        print(json.dumps(tree, indent=1, sort_keys=True))
        return
    with open(args.c, "w") as f:
        f.write((C_HEAD_VIDEO if args.video else C_HEAD) % source)
        for i in range(0, len(text), 100):
            f.write("    " + json.dumps(text[i:i + 100]) + "\n")
        f.write("    ;\n")


if __name__ == "__main__":
    main()
