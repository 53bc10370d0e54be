# SPDX-License-Identifier: Apache-2.0
"""samc over a dataset: one task (automatic masks, SAM 3 concepts, or prompted
segmentation) mapped over a list of images, serially or on a Dask distributed
cluster (docs/python.md, "A dataset on a cluster").

    python -m samc.batch amg --model sam2.1_hiera_tiny.pt --images photos/ --out out/amg --workers 4
    python -m samc.batch sam3 --model sam3.pt --vocab bpe_simple_vocab_16e6.txt.gz \\
        --text "a dog" --text "a cat" --images photos/ --out out/pets --scheduler tcp://head:8786

Each worker loads the model once. Each image's result is written atomically
to OUT/results/<key>.json (COCO-RLE annotations), so a restarted run skips
every image already done and a lost worker loses only the image it was on;
an image that fails gets OUT/failures/<key>.json with the message and the run
goes on. At the end OUT/annotations.json merges every result into one COCO
file and OUT/summary.json counts them.
"""
import argparse
import hashlib
import json
import os
import sys
import threading
import time

import numpy as np

IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".bmp", ".pnm", ".ppm", ".pgm", ".tga", ".gif")
TASKS = ("amg", "sam3", "segment")

# ---- the work list -------------------------------------------------------------------


def list_jobs(images=(), manifest=None):
    """Jobs {"image": path, ...prompts} from image files, directories (their
    image files, sorted) and a manifest (JSON lines with "image" and the
    prompts, or plain lines of paths)."""
    jobs = []
    for p in images:
        p = os.fspath(p)
        if os.path.isdir(p):
            names = sorted(n for n in os.listdir(p) if n.lower().endswith(IMAGE_EXTS))
            jobs += [{"image": os.path.join(p, n)} for n in names]
        else:
            jobs.append({"image": p})
    if manifest:
        base = os.path.dirname(os.path.abspath(manifest))
        with open(manifest, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                job = json.loads(line) if line.startswith("{") else {"image": line}
                if "image" not in job:
                    raise ValueError(f"{manifest}:{n}: a manifest line needs an \"image\"")
                if not os.path.isabs(job["image"]):
                    job["image"] = os.path.join(base, job["image"])
                jobs.append(job)
    return jobs


def job_key(job):
    """A file name for the image's result, stable across runs and unique
    (its base name and a digest of its absolute path)."""
    path = os.path.abspath(job["image"])
    digest = hashlib.sha1(path.encode("utf-8")).hexdigest()[:12]
    base = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(path))
    return f"{base}-{digest}"


# ---- one image, on a worker ------------------------------------------------------------

_tools = threading.local()  # per worker thread: the model's tools (predictors are one thread each)
_models = {}
_models_lock = threading.Lock()


def _model(spec):
    """The worker's model, loaded once per worker process."""
    import samc

    key = (spec["model"], spec.get("config"), spec.get("vocab"))
    with _models_lock:
        if key not in _models:
            _models[key] = samc.Model(spec["model"], config=spec.get("config"), vocab=spec.get("vocab"))
        return _models[key]


def _tool(spec):
    import samc

    key = json.dumps(spec, sort_keys=True)
    cache = getattr(_tools, "cache", None)
    if cache is None:
        cache = _tools.cache = {}
    if key not in cache:
        model = _model(spec)
        kw = dict(impl=spec.get("impl"), threads=spec.get("threads", 0))
        if spec["task"] == "amg":
            params = dict(spec.get("params", {}), output_mode="coco_rle")  # COCO RLE whatever was asked
            cache[key] = samc.SAM2AutomaticMaskGenerator(model, **params, **kw)
        elif spec["task"] == "sam3":
            cache[key] = samc.Sam3Processor(model, confidence_threshold=spec.get("threshold", 0.5), **kw)
        else:
            cache[key] = samc.SAM2ImagePredictor(model, **kw)
    return cache[key]


def _mask_annotation(mask, score, category, **extra):
    from ._native import ffi, lib
    from . import _native

    mask = np.ascontiguousarray(mask, dtype=np.uint8)
    out = ffi.new("char **")
    err = _native.new_error()
    _native.raise_for(lib.samc_mask_to_coco_rle(ffi.from_buffer("uint8_t[]", mask), mask.shape[0], mask.shape[1],
                                                out, err), err)
    counts = ffi.string(out[0]).decode("ascii")
    lib.samc_free(out[0])
    ys, xs = np.nonzero(mask)
    # XYWH of the inclusive box, as the generator's records (w = x1 - x0)
    bbox = [float(xs.min()), float(ys.min()), float(xs.max() - xs.min()), float(ys.max() - ys.min())] \
        if xs.size else [0.0, 0.0, 0.0, 0.0]
    return dict(segmentation={"size": list(mask.shape), "counts": counts}, area=int(xs.size), bbox=bbox,
                score=float(score), category=category, **extra)


def _run_amg(tool, image, job, spec):
    return [dict(segmentation=r["segmentation"], area=r["area"], bbox=r["bbox"], score=r["predicted_iou"],
                 category="object", predicted_iou=r["predicted_iou"], stability_score=r["stability_score"],
                 point_coords=r["point_coords"], crop_box=r["crop_box"]) for r in tool.generate(image)]


def _run_sam3(tool, image, job, spec):
    anns = []
    state = tool.set_image(image)
    for text in job.get("texts", spec["texts"]):
        tool.reset_all_prompts(state)
        state = tool.set_text_prompt(text, state)
        for i in range(len(state["scores"])):
            anns.append(_mask_annotation(state["masks"][i, 0], state["scores"][i], text,
                                         box_xyxy=[float(v) for v in state["boxes"][i]]))
    return anns


def _run_segment(tool, image, job, spec):
    """Each prompt of the job (points [[x, y, label], ...] and/or a box): the
    best of the multimask candidates (highest predicted IoU), or the one mask
    of a multi-point prompt, as `samc segment` chooses."""
    tool.set_image(image)
    anns = []
    for k, prompt in enumerate(job.get("prompts", [])):
        pts = np.asarray(prompt.get("points", []), np.float32).reshape(-1, 3)
        box = prompt.get("box")
        multi = bool(prompt.get("multimask", len(pts) <= 1 and box is None))
        masks, iou, _ = tool.predict(pts[:, :2] if len(pts) else None, pts[:, 2] if len(pts) else None,
                                     box=box, multimask_output=multi)
        best = int(np.argmax(iou))
        anns.append(_mask_annotation(masks[best] > 0, iou[best], "prompt", prompt_index=k))
    return anns


_RUN = {"amg": _run_amg, "sam3": _run_sam3, "segment": _run_segment}


def _write_json(path, obj):
    """Written under a temporary name, then renamed: a reader (or a restart)
    sees the whole file or none."""
    d, name = os.path.split(path)
    tmp = os.path.join(d, f".{name}.tmp{os.getpid()}.{threading.get_ident()}")  # hidden; same directory
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def process_image(job, spec, out_dir):
    """One image: skipped if its result exists, else computed and written;
    a failure is recorded, never raised. Returns (status, key, message)."""
    from . import images

    key = job_key(job)
    result = os.path.join(out_dir, "results", key + ".json")
    failure = os.path.join(out_dir, "failures", key + ".json")
    if os.path.exists(result):
        return "skipped", key, ""
    t0 = time.time()
    try:
        image = images.read_image(job["image"])
        anns = _RUN[spec["task"]](_tool(spec), image, job, spec)
        _write_json(result, {"file_name": job["image"], "height": int(image.shape[0]), "width": int(image.shape[1]),
                             "task": spec["task"], "seconds": round(time.time() - t0, 3), "annotations": anns})
        if os.path.exists(failure):
            os.remove(failure)
        return "ok", key, ""
    except Exception as e:  # recorded per image: the run goes on
        msg = f"{type(e).__name__}: {e}"
        _write_json(failure, {"file_name": job["image"], "error": msg})
        return "failed", key, msg


# ---- the run ---------------------------------------------------------------------------


class Progress:
    def __init__(self, total, stream=sys.stderr):
        self.total, self.stream = total, stream
        self.counts = {"ok": 0, "skipped": 0, "failed": 0}
        self.tty = stream.isatty()
        self.t0 = time.time()

    def update(self, status, key, msg):
        self.counts[status] += 1
        done = sum(self.counts.values())
        line = (f"[{done}/{self.total}] ok {self.counts['ok']}, skipped {self.counts['skipped']}, "
                f"failed {self.counts['failed']} ({time.time() - self.t0:.1f} s)")
        if status == "failed":
            print(f"\n{key}: {msg}" if self.tty else f"{key}: {msg}", file=self.stream)
        print("\r" + line if self.tty else line, end="" if self.tty else "\n", file=self.stream, flush=True)

    def close(self):
        if self.tty:
            print(file=self.stream)


def run(jobs, spec, out_dir, scheduler=None, workers=0, progress=None):
    """Map process_image over the jobs: on the cluster at `scheduler`, on a
    LocalCluster of `workers` processes, or in this process (workers 0).
    Returns the summary (also written to OUT/summary.json)."""
    for sub in ("results", "failures"):
        d = os.path.join(out_dir, sub)
        os.makedirs(d, exist_ok=True)
        for name in os.listdir(d):  # what a killed run was writing (one run per OUT at a time)
            if name.startswith(".") and ".tmp" in name:
                os.remove(os.path.join(d, name))
    progress = progress or Progress(len(jobs))
    statuses = {}
    if scheduler is None and workers <= 0:
        for job in jobs:
            st, key, msg = process_image(job, spec, out_dir)
            statuses[key] = st
            progress.update(st, key, msg)
    else:
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if scheduler is None:
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        from samc import batch  # by its module name: under `python -m`, this file is __main__, unknown to workers

        with Client(scheduler or cluster) as client:
            futures = client.map(batch.process_image, jobs, spec=spec, out_dir=out_dir, pure=False)
            for fut in as_completed(futures):
                st, key, msg = fut.result()
                statuses[key] = st
                progress.update(st, key, msg)
        if cluster is not None:
            cluster.close()
    progress.close()
    summary = merge(jobs, spec, out_dir)
    summary.update({s: sum(1 for v in statuses.values() if v == s) for s in ("ok", "skipped", "failed")})
    _write_json(os.path.join(out_dir, "summary.json"), summary)
    return summary


def merge(jobs, spec, out_dir):
    """OUT/annotations.json: every image's result in one COCO file (images in
    the jobs' order, ids from 1; categories: the texts for sam3)."""
    names = spec["texts"] if spec["task"] == "sam3" else ["object" if spec["task"] == "amg" else "prompt"]
    cats = {n: i + 1 for i, n in enumerate(dict.fromkeys(names))}
    coco = {"images": [], "annotations": [], "categories": [{"id": i, "name": n} for n, i in cats.items()]}
    missing = []
    for image_id, job in enumerate(jobs, 1):
        path = os.path.join(out_dir, "results", job_key(job) + ".json")
        if not os.path.exists(path):
            missing.append(job["image"])
            continue
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        coco["images"].append({"id": image_id, "file_name": r["file_name"], "height": r["height"],
                               "width": r["width"]})
        for a in r["annotations"]:
            if a["category"] not in cats:
                cats[a["category"]] = len(cats) + 1
                coco["categories"].append({"id": cats[a["category"]], "name": a["category"]})
            ann = {k: v for k, v in a.items() if k != "category"}
            ann.update(id=len(coco["annotations"]) + 1, image_id=image_id, category_id=cats[a["category"]],
                       iscrowd=0)
            coco["annotations"].append(ann)
    _write_json(os.path.join(out_dir, "annotations.json"), coco)
    return {"images": len(jobs), "with_results": len(coco["images"]), "annotations": len(coco["annotations"]),
            "without_results": missing}


# ---- the command -----------------------------------------------------------------------


def _param(s):
    k, _, v = s.partition("=")
    if not _:
        raise argparse.ArgumentTypeError(f"--param takes NAME=VALUE, got {s!r}")
    try:
        return k, json.loads(v)
    except json.JSONDecodeError:
        return k, v


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="python -m samc.batch", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task", choices=TASKS, help="amg: every object (SAM2AutomaticMaskGenerator); sam3: every "
                    "instance of --text concepts (Sam3Processor); segment: the manifest's point/box prompts")
    ap.add_argument("--model", required=True, help="checkpoint (.pt, .safetensors) or parity dump")
    ap.add_argument("--config", help="config preset or .json (default: detected)")
    ap.add_argument("--vocab", help="SAM 3: bpe_simple_vocab_16e6.txt.gz")
    ap.add_argument("--images", nargs="*", default=[], help="image files and directories")
    ap.add_argument("--manifest", help="JSON lines {\"image\": PATH, \"prompts\": [...], \"texts\": [...]} or "
                    "one path per line")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--text", action="append", default=[], help="sam3: a concept (repeatable)")
    ap.add_argument("--threshold", type=float, default=0.5, help="sam3: confidence threshold (0.5)")
    ap.add_argument("--param", action="append", type=_param, default=[],
                    help="amg: a SAM2AutomaticMaskGenerator argument, NAME=VALUE (e.g. points_per_side=16)")
    ap.add_argument("--impl", help="implementation (default fast)")
    ap.add_argument("--threads", type=int, default=0, help="samc threads per worker (0: OpenMP's default, "
                    "cores / workers for a LocalCluster)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a Dask scheduler (tcp://HOST:8786)")
    where.add_argument("--workers", type=int, default=0, help="a LocalCluster of N worker processes "
                       "(0: run in this process)")
    args = ap.parse_args(argv)
    if args.task == "sam3" and not args.text and not args.manifest:
        ap.error("sam3 needs --text (or \"texts\" in the manifest)")
    if args.param and args.task != "amg":
        ap.error("--param is for the amg task")
    if not args.images and not args.manifest:
        ap.error("give --images and/or --manifest")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        jobs = list_jobs(args.images, args.manifest)
    except (OSError, ValueError) as e:
        print(f"samc.batch: {e}", file=sys.stderr)
        return 2
    if not jobs:
        print("samc.batch: no images found", file=sys.stderr)
        return 2
    threads = args.threads
    if threads == 0 and args.workers > 0:
        threads = max(1, (os.cpu_count() or 1) // args.workers)
    spec = {"task": args.task, "model": os.path.abspath(args.model), "config": args.config,
            "vocab": os.path.abspath(args.vocab) if args.vocab else None, "impl": args.impl, "threads": threads,
            "texts": args.text, "threshold": args.threshold, "params": dict(args.param)}
    import samc

    if args.scheduler is None:  # a bad checkpoint stops a local run before any worker starts
        try:
            _model(spec)
        except samc.SamcError as e:
            print(f"samc.batch: {e}", file=sys.stderr)
            return 1
    summary = run(jobs, spec, args.out, scheduler=args.scheduler, workers=args.workers)
    print(f"{summary['ok']} done, {summary['skipped']} skipped (done before), {summary['failed']} failed; "
          f"{summary['annotations']} annotations in {os.path.join(args.out, 'annotations.json')}")
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
