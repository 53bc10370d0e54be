#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A SAM 3 image parity dump whose geometric prompts hold *points* (and padded
point/box sequences), which Sam3Processor cannot express: the official
processor runs set_image and set_text_prompt, then the geometric prompt of
its state is replaced by a Prompt built here and _forward_grounding is run
once more. Everything else (model building, tracing, writing) is
tools/dump_sam3.py's; run with that directory on PYTHONPATH.

Example:
  /usr/bin/python3 tools/sam3_geo_probe.py --sam3-src /work/ext/sam3 \\
      --sam3-commit 99d02f28c8d3... --ftfy-src /work/ext/ftfy --set ... --seed 3 \\
      --text "a cat" --points "0.3,0.4,1;0.9,0.1,0;1.05,-0.02,1" --point-pad 1 \\
      --boxes "0.5,0.5,0.2,0.3,1;0.2,0.2,0.1,0.1,0" --box-pad 1 --out probe.h5

--point-pad / --box-pad mark that many trailing entries as padding (mask True),
which the geometry encoder must skip when it packs points, boxes and CLS.
"""

import argparse
import json
import os
import shlex
import sys

import numpy as np
import torch

# tools/dump_sam3.py and its modules; $SAMC_DUMP_TOOLS overrides this
# directory (e.g. another checkout that has them).
sys.path.insert(0, os.environ.get("SAMC_DUMP_TOOLS", os.path.dirname(os.path.abspath(__file__))))
import dump_sam3  # noqa: E402
import sam3_build  # noqa: E402
from parity_trace import LinkingWriter, set_str_attr  # noqa: E402


def parse_rows(text, width):
    rows = []
    for item in filter(None, (s.strip() for s in (text or "").split(";"))):
        vals = [float(v) for v in item.split(",")]
        if len(vals) != width + 1:
            raise SystemExit(f"{item!r}: expected {width} coordinates and a label")
        rows.append(vals)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sam3_build.add_model_args(p)
    p.add_argument("--image-size", default="120x160")
    p.add_argument("--text", default="visual")
    p.add_argument("--points", help="x,y,label;... (normalised)")
    p.add_argument("--boxes", help="cx,cy,w,h,label;... (normalised)")
    p.add_argument("--point-pad", type=int, default=0)
    p.add_argument("--box-pad", type=int, default=0)
    p.add_argument("--threshold", type=float, default=0.5)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)

    built = sam3_build.build_from_args(args)
    model = built.model
    resolution = built.tree["backbone"]["visual"]["trunk"]["img_size"]
    from sam3.model.geometry_encoders import Prompt
    from sam3.model.sam3_image_processor import Sam3Processor
    from synth_image import parse_hw, synth_image
    from PIL import Image
    processor = Sam3Processor(model, resolution=resolution, device="cpu",
                              confidence_threshold=args.threshold)
    tracer, calls = dump_sam3.install_tracing(model, processor, False)

    h, w = parse_hw(args.image_size)
    image = synth_image(h, w, args.seed)
    pts, bxs = parse_rows(args.points, 2), parse_rows(args.boxes, 4)

    def seq(rows, width, pad):
        n = len(rows)
        emb = torch.tensor([r[:width] for r in rows], dtype=torch.float32).view(n, 1, width)
        lab = torch.tensor([int(r[width]) for r in rows], dtype=torch.long).view(n, 1)
        mask = torch.zeros(1, n, dtype=torch.bool)
        if pad:
            mask[0, n - pad:] = True
        return emb, lab, mask

    with torch.inference_mode():
        state = processor.set_image(Image.fromarray(image))
        processor.set_text_prompt(args.text, state)
        pe, pl, pm = seq(pts, 2, args.point_pad)
        be, bl, bm = seq(bxs, 4, args.box_pad)
        state["geometric_prompt"] = Prompt(box_embeddings=be, box_mask=bm, box_labels=bl,
                                           point_embeddings=pe, point_mask=pm, point_labels=pl)
        processor._forward_grounding(state)

    w_ = LinkingWriter(args.out)
    set_str_attr(w_.f, "format", "samc-parity-dump")
    w_.f.attrs.create("format_version", np.int64(1))
    set_str_attr(w_.f, "note_command", shlex.join(sys.argv))
    args.variant = "geo-points-probe"
    dump_sam3.write_model(w_, built, args, resolution)
    g = w_.group(w_.f, "inputs")
    set_str_attr(g, "task", "sam3_image")
    g.attrs.create("confidence_threshold", np.float64(args.threshold))
    w_.dataset(g, "image_u8", image)
    set_str_attr(g, "note_probe", json.dumps({"text": args.text, "points": pts, "boxes": bxs,
                                               "point_pad": args.point_pad,
                                               "box_pad": args.box_pad}))
    w_.trace(tracer.records)
    w_.close()
    print(f"wrote {args.out}: {len(tracer.records)} trace records")


if __name__ == "__main__":
    main()
