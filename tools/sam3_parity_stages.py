#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Per-stage summary of a SAM 3 `samc parity --json` report: for each stage
(ViT, neck, text, geometry, encoder, decoder, scoring, seg head, post,
outputs) the rows passed / failed / flipped and the worst rel with its point.
This is how the real-size table of docs/parity.md is made.

usage: tools/sam3_parity_stages.py REPORT.json [...]

Standard library only.
"""
import json
import sys

# (stage, prefix of the module name): the first match wins.
STAGES = [
    ("preprocess", "@preprocess"),
    ("ViT", "backbone.vision_backbone.trunk"),
    ("neck", "backbone.vision_backbone"),
    ("text", "@tokenize"),
    ("text", "backbone.language_backbone"),
    ("geometry", "geometry_encoder"),
    ("encoder", "transformer.encoder"),
    ("decoder", "transformer.decoder"),
    ("scoring", "dot_prod_scoring"),
    ("seg head", "segmentation_head"),
    ("post", "@postprocess"),
    ("outputs", "/outputs"),
]


def stage_of(module):
    for name, prefix in STAGES:
        if module.startswith(prefix):
            return name
    return "other"


def label(p):
    s = p["module"]
    if p.get("call"):
        s += "#%d" % p["call"]
    return s + " " + p["slot"]


def summarise(path):
    with open(path) as f:
        d = json.load(f)
    stats = {}
    for p in d["points"]:
        st = stats.setdefault(stage_of(p["module"]), {"pass": 0, "fail": 0, "flip": 0, "worst": None})
        res = p["result"]  # pass, FLIP, or a failure (FAIL, SHAPE, NOT-PRODUCED, ...)
        st["pass" if res == "pass" else "flip" if res == "FLIP" else "fail"] += 1
        if "rel" in p and (st["worst"] is None or p["rel"] > st["worst"]["rel"]):
            st["worst"] = p
    print("%s: %s %s, %d passed, %d failed, %d flips, worst rel %.2e" % (
        path, d["impl"], d["mode"], d["passed"], d["failed"], d["flips"], d["worst_rel"]))
    print("| stage | rows pass / fail / flip | worst rel | where |")
    print("|---|---|---|---|")
    order = [n for n, _ in STAGES] + ["other"]
    for name in sorted(stats, key=order.index):
        st = stats[name]
        w = st["worst"]
        print("| %s | %d / %d / %d | %s | %s |" % (
            name, st["pass"], st["fail"], st["flip"], "%.2e" % w["rel"] if w else "-",
            "`%s`" % label(w) if w else "-"))
    return 1 if d["failed"] else 0


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    return max(summarise(p) for p in sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
