# SPDX-License-Identifier: Apache-2.0
"""samc.batch over a small dataset: a LocalCluster of several workers gives
the serial run's results; a worker killed mid-run loses nothing that had
finished; a restart skips what is done; a bad image is recorded and the run
goes on; the three tasks through `python -m samc.batch`."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import samc
from samc import batch
from conftest import FIXTURES, REPO, model_files

AMG_MODEL, AMG_CONFIG, _ = model_files(FIXTURES / "amg/amg_a_nocrop.h5")
SPEC = {"task": "amg", "model": AMG_MODEL, "config": AMG_CONFIG, "vocab": None, "impl": "fast", "threads": 1,
        "texts": [], "threshold": 0.5,
        "params": {"points_per_side": 8, "pred_iou_thresh": 0.0, "stability_score_thresh": 0.0}}


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """12 images (crops and flips of the demo image) and one that is not an image."""
    d = tmp_path_factory.mktemp("images")
    demo = samc.read_image(FIXTURES / "demo/demo.png")
    for i in range(12):
        img = demo[(i % 3) * 20:, (i % 4) * 30:]
        samc.write_png(d / f"img_{i:02d}.png", np.ascontiguousarray(img[:, ::-1] if i % 2 else img))
    (d / "img_99_broken.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    return d


def json_files(d):
    return sorted(n for n in os.listdir(d) if n.endswith(".json") and not n.startswith(".")) if d.exists() else []


def results(out):
    """{image file name: its annotations} of a run."""
    got = {}
    for name in json_files(out / "results"):
        with open(out / "results" / name) as f:
            r = json.load(f)
        got[os.path.basename(r["file_name"])] = r["annotations"]
    return got


@pytest.fixture(scope="module")
def serial(dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("serial")
    jobs = batch.list_jobs([dataset])
    summary = batch.run(jobs, SPEC, str(out), workers=0)
    assert (summary["ok"], summary["failed"], summary["skipped"]) == (12, 1, 0)
    return out, jobs


def test_serial_run_and_restart(serial):
    out, jobs = serial
    fail = json.load(open(out / "failures" / (batch.job_key(jobs[-1]) + ".json")))
    assert "img_99_broken.png" in fail["error"] and "SamcFormatError" in fail["error"]
    coco = json.load(open(out / "annotations.json"))
    assert len(coco["images"]) == 12 and coco["annotations"]
    assert {a["image_id"] for a in coco["annotations"]} <= {im["id"] for im in coco["images"]}
    a = coco["annotations"][0]
    assert set(a["segmentation"]) == {"size", "counts"} and isinstance(a["segmentation"]["counts"], str)
    before = {n: os.stat(out / "results" / n).st_mtime_ns for n in json_files(out / "results")}
    again = batch.run(jobs, SPEC, str(out), workers=0)
    assert (again["ok"], again["skipped"], again["failed"]) == (0, 12, 1)
    assert before == {n: os.stat(out / "results" / n).st_mtime_ns for n in json_files(out / "results")}
    assert json.load(open(out / "annotations.json")) == coco


def test_local_cluster_with_a_worker_killed(serial, dataset, tmp_path):
    """Three worker processes; one is killed once a few images are done: the
    images finished before stay as written, the lost work is redone, and the
    results equal the serial run's."""
    from distributed import Client, LocalCluster

    out_serial, jobs = serial
    out = tmp_path / "cluster"
    killed = {}
    with LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        pids = list(client.run(os.getpid).values())

        def kill_one():
            while True:
                done = json_files(out / "results")
                if len(done) >= 3:
                    killed["done"] = {n: (out / "results" / n).read_bytes() for n in done}
                    os.kill(pids[0], signal.SIGKILL)
                    return
                time.sleep(0.005)

        killer = threading.Thread(target=kill_one)
        killer.start()
        summary = batch.run(jobs, SPEC, str(out), scheduler=cluster.scheduler_address)
        killer.join()
    assert len(killed["done"]) < 12, "the worker was killed after the run had finished"
    assert summary["failed"] == 1 and summary["ok"] + summary["skipped"] == 12
    for name, content in killed["done"].items():
        assert (out / "results" / name).read_bytes() == content
    got, want = results(out), results(out_serial)
    assert got == want


def run_cli(*args):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "samc.batch", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_sam3_and_segment(dataset, tmp_path):
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"image": str(dataset / "img_00.png"),
                                    "prompts": [{"points": [[100, 80, 1]]}, {"box": [20, 20, 200, 150]}]}) + "\n"
                        + json.dumps({"image": str(dataset / "img_01.png"), "prompts": [{"points": [[50, 60, 1],
                                                                                         [90, 70, 0]]}]}) + "\n")
    r = run_cli("segment", "--model", FIXTURES / "ckpt/tiny_c_f32.pt", "--config",
                FIXTURES / "ckpt/tiny_c_f32.config.json", "--manifest", manifest, "--out", tmp_path / "seg")
    assert r.returncode == 0, r.stderr
    coco = json.load(open(tmp_path / "seg/annotations.json"))
    assert len(coco["images"]) == 2 and len(coco["annotations"]) == 3
    assert [a["prompt_index"] for a in coco["annotations"]] == [0, 1, 0]
    r = run_cli("sam3", "--model", FIXTURES / "sam3/tiny_s2_sam3.pt", "--config",
                FIXTURES / "sam3/tiny_s2_sam3.config.json", "--vocab",
                REPO / "tests/data/tokenizer/bpe_simple_vocab_16e6.txt.gz", "--text", "a cat", "--text", "a dog",
                "--threshold", "0", "--images", dataset / "img_02.png", dataset / "img_03.png", "--out",
                tmp_path / "s3")
    assert r.returncode == 0, r.stderr
    coco = json.load(open(tmp_path / "s3/annotations.json"))
    assert [c["name"] for c in coco["categories"]] == ["a cat", "a dog"]
    assert {a["category_id"] for a in coco["annotations"]} == {1, 2}
    r = run_cli("amg", "--model", tmp_path / "missing.pt", "--images", dataset, "--out", tmp_path / "x")
    assert r.returncode == 1 and "missing.pt" in r.stderr
    r = run_cli("sam3", "--model", AMG_MODEL, "--images", dataset, "--out", tmp_path / "y")
    assert r.returncode == 2 and "--text" in r.stderr
