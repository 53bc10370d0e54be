# SPDX-License-Identifier: Apache-2.0
"""Decision margins and path counters of a SAM 3 video / predict_inst run
(tools/README.md, "dump_sam3_video.py": Decision margins, Counters).

A margin is the distance of a thresholded value from its threshold, in the
unit the harness compares that value in (absolute for probabilities, IoUs,
ratios and object-score logits; relative to the tensor's largest magnitude,
as the harness's `rel`, for per-pixel binarisation of logit maps and for the
bf16 roundings).  A chained C run whose value lands within its tolerance of
a threshold may take the other branch; the dump records where that could
happen, the harness re-synchronises there (docs/parity.md).
"""

import collections

import numpy as np

from dump_sam2_video import TOL_FAST, TOL_REF, bf16_midpoint_distance

KINDS = {
    "det_score": "|sigmoid(joint logit) - score_threshold_detection| per query (NMS prefilter "
                 "and the keep threshold), absolute",
    "nms_iou": "|mask IoU - det_nms_thresh| per pair of NMS candidates, absolute",
    "det_binarise": "min |logit| / max|logit| of detector masks binarised at 0 (NMS, association)",
    "trk_binarise": "min |logit| / max|logit| of tracker masks binarised at 0 (association, "
                    "occlusion, outputs)",
    "assoc_iou": "|det-track IoU - assoc_iou_thresh|, absolute",
    "trk_assoc_iou": "|det-track IoU - trk_assoc_iou_thresh|, absolute",
    "new_det_score": "|detection score - new_det_thresh|, absolute",
    "high_conf_score": "|detection score - 0.8| (HIGH_CONF_THRESH of _associate_det_trk), "
                       "detections matched to a track",
    "high_iou": "|max det-track IoU - 0.8| (HIGH_IOU_THRESH), detections matched to a track",
    "recondition_score": "|tracker object score logit - 0.8| (HIGH_CONF_THRESH of "
                         "_recondition_masklets)",
    "occlusion_iou": "|track-track IoU - suppress_overlapping_based_on_recent_occlusion_threshold|",
    "shrink_ratio": "|area after pixel-wise non-overlap / area before - 0.3| "
                    "(_suppress_shrinked_masks), absolute",
    "object_score": "|tracker object score logit| (threshold 0), absolute",
    "iou_argmax": "best - second IoU prediction of a used multimask argmax, absolute",
    "stability": "|stability score - 0.98| of a single-mask output, absolute",
    "mem_select": "|eff_iou_score - mf_threshold| of a memory frame candidate (frame_filter)",
    "mem_binarise": "min |logit| / max|logit| of a mask binarised for the memory encoder",
    "fill_binarise": "min |logit| / max|logit| of a mask given to the hole fill",
    "bf16_feature": "|x - m| / max|x| of the tracker features rounded to bf16 (m the rounding "
                    "midpoint)",
    "bf16_memory": "|x - m| / max|x| of stored memory rounded to bf16",
    "inst_binarise": "min |logit| / max|logit| of predict_inst low-res masks given to the hole fill",
}
PER_VALUE = ("bf16_feature", "bf16_memory")


def rel_min_abs(x):
    """min |x| / max |x| of a tensor / array (1.0 when empty or all zero)."""
    a = np.abs(np.asarray(x, np.float64))
    if a.size == 0 or a.max() == 0:
        return 1.0
    return float(a.min() / a.max())


class Margins:
    def __init__(self):
        self.entries = []            # (kind, margin, where)
        self.bf16 = []               # (kind, where, n, min, below ref, below fast)

    def add(self, kind, margin, where):
        assert kind in KINDS, kind
        self.entries.append((kind, float(margin), where))

    def add_all(self, kind, values, threshold, where):
        v = np.asarray(values, np.float64).reshape(-1)
        if v.size:
            d = np.abs(v - float(threshold))
            i = int(np.argmin(d))
            self.add(kind, d[i], f"{where} (value {v[i]:.6g}, index {i})")

    def add_bf16(self, kind, x, where):
        x = np.asarray(x, np.float32)
        if x.size == 0:
            return
        dist = bf16_midpoint_distance(x) / max(float(np.abs(x).max()), 1e-30)
        dist[x == 0] = np.inf      # zero rounds to itself
        i = int(np.argmin(dist))
        self.bf16.append((kind, where, dist.size, float(dist.flat[i]),
                          int((dist < TOL_REF).sum()), int((dist < TOL_FAST).sum())))
        self.add(kind, dist.flat[i], f"{where} value {i}")

    def summary(self):
        out = {}
        for kind in KINDS:
            ms = [(m, w) for k, m, w in self.entries if k == kind]
            if not ms:
                continue
            m, w = min(ms)
            d = {"count": len(ms), "min": m, "where": w,
                 "below_ref": sum(x < TOL_REF for x, _ in ms),
                 "below_fast": sum(x < TOL_FAST for x, _ in ms)}
            if kind in PER_VALUE:
                b = [e for e in self.bf16 if e[0] == kind]
                d.update(count=sum(e[2] for e in b), tensors=len(b),
                         below_ref=sum(e[4] for e in b), below_fast=sum(e[5] for e in b))
            out[kind] = d
        return out

    def report(self, max_warn=30):
        lines = [f"decision margins (tolerances: ref {TOL_REF:g}, fast {TOL_FAST:g}):"]
        for kind, d in self.summary().items():
            unit = "values" if kind in PER_VALUE else "decisions"
            lines.append(f"  {kind:18s} {d['count']:7d} {unit}, min {d['min']:.3e} ({d['where']}); "
                         f"below ref {d['below_ref']}, below fast {d['below_fast']}")
        warns = sorted((e for e in self.entries if e[0] not in PER_VALUE and e[1] < TOL_FAST),
                       key=lambda e: e[1])
        for k, m, w in warns[:max_warn]:
            tag = "ref and fast" if m < TOL_REF else "fast"
            lines.append(f"  WARNING {k} margin {m:.3e} < {tag} tolerance: {w}")
        if len(warns) > max_warn:
            lines.append(f"  ... {len(warns) - max_warn} more below the fast tolerance")
        return "\n".join(lines)


class Counters:
    """How often each path of the official loop ran (printed by the dump
    tools; fixtures/README.md says which fixture exercises what from these)."""

    def __init__(self):
        self.c = collections.Counter()
        self.examples = collections.defaultdict(list)

    def add(self, key, n=1, example=None):
        if n:
            self.c[key] += n
            if example is not None and len(self.examples[key]) < 4:
                self.examples[key].append(example)

    def as_dict(self):
        return {k: {"count": v, "examples": self.examples.get(k, [])}
                for k, v in sorted(self.c.items())}

    def report(self):
        lines = ["paths taken (counters):"]
        for k, v in sorted(self.c.items()):
            ex = self.examples.get(k)
            lines.append(f"  {k:40s} {v:6d}" + (f"   e.g. {ex}" if ex else ""))
        return "\n".join(lines)
