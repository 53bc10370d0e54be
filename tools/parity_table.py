#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run `samc parity` on every committed fixture with every implementation and
mode, and print one markdown table per fixture family: points passed/failed,
rounding flips, worst max-relative error and where it is, lowest final-mask IoU.

usage: tools/parity_table.py [--samc build/samc] [--impl ref,fast,bf16]
                             [--mode chained,isolated] [FIXTURE.h5 ...]

Without fixtures it takes every fixtures/**/*.h5. This is how the tables in
docs/parity.md are made (the date and commit go above each table). Standard
library only: runs under any python3.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


def run_one(samc, dump, impl, mode):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        jpath = f.name
    cmd = [samc, "parity", dump, "--impl", impl, "--json", jpath]
    if mode == "isolated":
        cmd.append("--isolated")
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        with open(jpath) as f:
            d = json.load(f)
    except (OSError, ValueError):
        d = None
    finally:
        if os.path.exists(jpath):
            os.unlink(jpath)
    if d is None:
        last = (p.stderr or p.stdout).strip().splitlines()
        return {"error": last[-1] if last else "exit %d" % p.returncode}
    m = re.search(r"lowest mask IoU[^:]*:\s*([0-9.]+)", p.stdout)
    worst = max(d.get("points", []), key=lambda q: q.get("rel") or 0, default=None)
    where = ""
    if worst:
        where = worst["module"]
        if worst.get("call"):
            where += "#%d" % worst["call"]
    return {"passed": d["passed"], "failed": d["failed"], "flips": d.get("flips", 0),
            "worst": d.get("worst_rel"), "where": where, "tol": d.get("tol"),
            "iou": float(m.group(1)) if m else None, "rc": p.returncode}


def cell(r):
    if "error" in r:
        return "error: " + r["error"][:60]
    s = "%d / %d" % (r["passed"], r["failed"])
    if r["flips"]:
        s += " (%d flips)" % r["flips"]
    s += ", %.2e" % r["worst"] if r["worst"] is not None else ""
    if r["where"]:
        s += " (%s)" % r["where"]
    if r["iou"] is not None and r["iou"] < 1.0:
        s += ", IoU %.4f" % r["iou"]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samc", default="build/samc")
    ap.add_argument("--impl", default="ref,fast,bf16")
    ap.add_argument("--mode", default="chained,isolated")
    ap.add_argument("fixtures", nargs="*")
    a = ap.parse_args()
    dumps = a.fixtures or sorted(glob.glob("fixtures/**/*.h5", recursive=True))
    impls, modes = a.impl.split(","), a.mode.split(",")
    print("| fixture | impl (tol) | " + " | ".join("%s: pass / fail, worst rel (where)" % m for m in modes) + " |")
    print("|---|---|" + "---|" * len(modes))
    bad = 0
    for dump in dumps:
        for impl in impls:
            rs = [run_one(a.samc, dump, impl, m) for m in modes]
            tol = next((r["tol"] for r in rs if "tol" in r), None)
            bad += sum(1 for r in rs if "error" in r or r["failed"])
            name = os.path.relpath(dump, "fixtures").rsplit(".", 1)[0]
            print("| %s | %s%s | %s |" % (name, impl, " (%g)" % tol if tol else "", " | ".join(cell(r) for r in rs)),
                  flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
