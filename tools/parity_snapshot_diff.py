#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_snapshot_diff.py A B - compare two tools/parity_snapshot.sh outputs.

Prints every report whose rows differ in digest (the bytes samc produced)
or shape, and exits 1 when any does; 0 when both trees produced
bit-identical outputs for every parity point of every fixture. Verdicts
that changed while the bytes did not (a new pass criterion) are counted
and listed apart; reports present on one side only are listed too."""
import json, os, sys

def rows(path):
    with open(path) as f:
        rep = json.load(f)
    return [(p["module"], p["call"], p["slot"], p.get("digest"), tuple(p["shape"]), p["result"])
            for p in rep["points"]]

a, b = sys.argv[1], sys.argv[2]
bad = verdicts = 0
for name in sorted(set(os.listdir(a)) | set(os.listdir(b))):
    pa, pb = os.path.join(a, name), os.path.join(b, name)
    if not (os.path.exists(pa) and os.path.exists(pb)):
        print(f"{name}: only in {'A' if os.path.exists(pa) else 'B'}")
        continue
    ra, rb = rows(pa), rows(pb)
    diff = [(x, y) for x, y in zip(ra, rb) if x[:5] != y[:5]]
    changed = [(x, y) for x, y in zip(ra, rb) if x[:5] == y[:5] and x[5] != y[5]]
    for x, y in changed:
        print(f"{name}: {x[0]}#{x[1]} slot {x[2]}: same bytes, verdict {x[5]} -> {y[5]}")
    verdicts += len(changed)
    if len(ra) != len(rb) or diff:
        bad += 1
        print(f"{name}: {len(ra)} vs {len(rb)} rows, {len(diff)} differ")
        for x, y in diff[:5]:
            print(f"   A {x}\n   B {y}")
print(("identical" if not bad else f"{bad} report(s) differ") + f"; {verdicts} verdict(s) changed on the same bytes")
sys.exit(1 if bad else 0)
