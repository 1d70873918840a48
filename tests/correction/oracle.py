#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Independent oracle for test-correction's randomized cross-check (tests only).

Reads an .npz batch or a raw batch (written by test-correction.c write_raw) and a JSON config, runs shared/reference/spec_ref.py
(numpy restatement of the spec) and prints {"error": type|null, "metrics": {...},
"mask": [...flat...], "weights": [...flat...]|null} with non-finite numbers as strings.
"""
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.environ.get("DW_SHARED_DIR", "../shared"), "reference"))
import spec_ref  # noqa: E402


def load_raw(path):
    with open(path, "rb") as f:
        head = f.readline().decode().split()
        B, T, lpd, md = int(head[0]), int(head[1]), head[2], head[3]
        n = B * T
        old = np.frombuffer(f.read(n * np.dtype(lpd).itemsize), lpd).reshape(B, T)
        roll = np.frombuffer(f.read(n * np.dtype(lpd).itemsize), lpd).reshape(B, T)
        m = np.frombuffer(f.read(n * np.dtype(md).itemsize), md).reshape(B, T)
    return old, roll, m


def enc(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def main():
    if sys.argv[1].endswith(".npz"):
        d = np.load(sys.argv[1])
        old, roll, m = d["old_log_prob"], d["rollout_log_prob"], d["response_mask"]
    else:
        old, roll, m = load_raw(sys.argv[1])
    gen = sys.argv[2]
    cfg = json.loads(sys.argv[3])
    out = {"error": None, "metrics": {}, "mask": None, "weights": None}
    try:
        with np.errstate(all="ignore"):
            if gen == "verl":
                w, nm, mets = spec_ref.head_entry(old, roll, m, cfg)
            elif gen == "slime":
                w, nm, M = spec_ref.slime_entry(old, roll, m, cfg)
                mets = spec_ref.slime_reduce(M, m)
            else:
                w, nm, mets = spec_ref.old_entry(old, roll, m, cfg, bn_exclude_empty=(gen == "verl-0.7"))
        out["metrics"] = {k: enc(v) for k, v in mets.items()}
        out["mask"] = [enc(v) for v in np.asarray(nm, np.float64).ravel()]
        out["weights"] = None if w is None else [enc(v) for v in np.asarray(w, np.float64).ravel()]
    except spec_ref.SpecError as e:
        out["error"] = str(e)
    json.dump(out, sys.stdout)


main()
