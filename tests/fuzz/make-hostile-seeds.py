#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Structure-aware fuzz seeds from the hostile-input findings of issue 14.

Writes, into tests/fuzz/corpus/<target>/hostile-*: deep nesting, huge declared sizes, duplicate
names and crafted stores, each small (the fuzzer mutates from there; the full-size reproductions
are generated at run time by tests/hostile/). Run from the source root:
    python3 tests/fuzz/make-hostile-seeds.py BUILD/app/driftwatch-cli
The store seeds start from a store written by driftwatch-cli (so they carry the real schema) and
are then damaged with plain SQLite, as an attacker would.
"""
import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, "hostile-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def safetensors(header, data=b""):
    h = header.encode() if isinstance(header, str) else header
    return struct.pack("<Q", len(h)) + h + data


TENSORS = {
    "old_log_prob": {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]},
    "rollout_log_prob": {"dtype": "F32", "shape": [1, 2], "data_offsets": [8, 16]},
    "response_mask": {"dtype": "U8", "shape": [1, 2], "data_offsets": [16, 18]},
}


def safetensors_seeds():
    body = json.dumps(TENSORS)[1:-1]
    put("safetensors", "deep-nesting", safetensors('{"x": ' + "[" * 3000 + "]" * 3000 + ", " + body + "}", bytes(18)))
    put("safetensors", "deep-nesting-unclosed", safetensors('{"x": ' + "[" * 3000, b""))
    put("safetensors", "duplicate-tensor", safetensors("{" + body + ', "old_log_prob": {"dtype": "F32", "shape": [1, 2], "data_offsets": [18, 26]}}', bytes(26)))
    put("safetensors", "huge-header-length", struct.pack("<Q", 2**63 - 1) + b"{}")
    put("safetensors", "huge-shape", safetensors('{"old_log_prob": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 8]}}', bytes(8)))
    put("safetensors", "huge-offsets", safetensors('{"old_log_prob": {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 18446744073709551615]}}', bytes(8)))
    put("safetensors", "int-beyond-int64", safetensors('{"old_log_prob": {"dtype": "F32", "shape": [18446744073709551617, 2], "data_offsets": [0, 8]}}', bytes(8)))
    put("safetensors", "fat-metadata", safetensors('{"__metadata__": {' + ", ".join('"k%d": "%s"' % (i, "v" * 64) for i in range(64)) + "}, " + body + "}", bytes(18)))


def npy(shape, descr="<f4", body=None):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else ""))
    pad = (64 - (10 + len(d) + 1) % 64) % 64
    h = d + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + (body if body is not None else b"")


def npz(members, compress=zipfile.ZIP_STORED):
    path = tempfile.mktemp(suffix=".npz")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are the point
        with zipfile.ZipFile(path, "w", compress) as z:
            for name, data in members:
                z.writestr(name, data)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


def npz_seeds():
    ok = [("old_log_prob.npy", npy((1, 2), body=bytes(8))), ("rollout_log_prob.npy", npy((1, 2), body=bytes(8))),
          ("response_mask.npy", npy((1, 2), "|u1", b"\x01\x01"))]
    put("npz", "duplicate-member", npz(ok + [("old_log_prob.npy", npy((1, 2), body=bytes(8)))]))
    # a small deflate bomb: two members of 1 MB zeros declared and stored compressed
    put("npz", "deflate-bomb", npz([("old_log_prob.npy", npy((1, 262144), body=bytes(1 << 20))),
                                    ("rollout_log_prob.npy", npy((1, 262144), body=bytes(1 << 20))),
                                    ("response_mask.npy", npy((1, 262144), "|u1", b"\x01" * 262144))], zipfile.ZIP_DEFLATED))
    put("npz", "huge-shape", npz([("old_log_prob.npy", npy((2**40, 2**40), body=bytes(8)))] + ok[1:]))


def jsonl_seeds():
    put("batch-jsonl", "deep-nesting", '{"old_log_prob": ' + "[" * 2000 + "]" * 2000 + "}\n")
    line = '{"old_log_prob": [%s], "rollout_log_prob": [%s], "response_mask": [%s]}\n'
    long = line % (",".join(["-1"] * 2000), ",".join(["-1"] * 2000), ",".join(["1"] * 2000))
    put("batch-jsonl", "ragged", long + (line % ("-1", "-1", "1")) * 200)
    put("batch-jsonl", "int-beyond-int64", line % ("-1", "-1", "18446744073709551617"))


def config_seeds():
    # first byte: generation (b % 5: 0 verl … 4 slime) and format (b / 5 % 3: 0 yaml, 1 hydra, 2 args)
    laughs = "anchors:\n  a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    for c in "bcdefghi":
        laughs += "  %s: &%s [%s]\n" % (c, c, ",".join(["*" + chr(ord(c) - 1)] * 9))
    laughs += "algorithm:\n  rollout_correction:\n    rollout_is: token\n    rollout_rs: *i\n"
    put("config-import", "billion-laughs", b"\x00" + laughs.encode())
    put("config-import", "deep-flow", b"\x00" + ("algorithm:\n  rollout_correction:\n    rollout_is: " + "[" * 3000 + "]" * 3000 + "\n").encode())
    put("config-import", "deep-block", b"\x00" + "".join("%sk%d:\n" % (" " * (i + 1), i) for i in range(200)).encode())
    put("config-import", "yaml11-ints", b"\x00" + b"algorithm:\n  rollout_correction:\n    rollout_is: token\n    rollout_is_threshold: 0x10\n    rollout_rs_threshold: 1:30\n")
    put("config-import", "int-beyond-int64", b"\x00" + b"algorithm:\n  rollout_correction:\n    rollout_is: token\n    rollout_is_threshold: 18446744073709551616\n")
    put("config-import", "duplicate-keys", b"\x00" + b"algorithm:\n  rollout_correction:\n    rollout_is: token\n    rollout_is: sequence\n")


def sql(path, *statements):
    for s in statements:  # a connection each: a schema edit is seen by the next statement
        db = sqlite3.connect(path)
        db.executescript(s)
        db.commit()
        db.close()


def store_seeds(cli):
    tmp = tempfile.mkdtemp()
    try:
        run = os.path.join(tmp, "run")
        os.makedirs(os.path.join(run, "batches"))
        with open(os.path.join(run, "metrics.jsonl"), "w") as f:
            for s in range(1, 4):
                f.write(json.dumps({"step": s, "data": {"actor/pg_loss": s / 2, "rollout_corr/is_weight_mean": 1.0}}) + "\n")
        with open(os.path.join(run, "batches", "step_000002.jsonl"), "w") as f:
            f.write('{"old_log_prob": [-1.5, -1], "rollout_log_prob": [-1.4, -1], "response_mask": [1, 1]}\n')
        base = os.path.join(tmp, "base.db")
        subprocess.run([cli, "ingest", "--quiet", "--db", base, run], check=True)
        sql(base, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;")

        def variant(name, *statements):
            path = os.path.join(tmp, name + ".db")
            shutil.copy(base, path)
            sql(path, *statements)
            with open(path, "rb") as f:
                put("store-open", name, f.read())

        variant("valid")
        variant("negative-version", "PRAGMA user_version = -1")
        variant("newer-version", "PRAGMA user_version = 2147483647")
        variant("old-version-missing-tables", "PRAGMA user_version = 1; DROP TABLE points;")
        variant("null-names",
                "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(replace(replace(sql, "
                "'name TEXT NOT NULL UNIQUE', 'name TEXT UNIQUE'), 'name TEXT NOT NULL,', 'name TEXT,'), "
                "'framework TEXT NOT NULL', 'framework TEXT') WHERE name IN ('runs', 'tags');",
                "UPDATE runs SET name = NULL, framework = NULL; UPDATE tags SET name = NULL;")
        variant("huge-rows", "UPDATE batches SET rows = 4611686018427387904")
        variant("bad-dtypes", "UPDATE batches SET lp_dtype = 99, mask_dtype = -1")
        variant("bad-file-records", "UPDATE files SET format = 999, prefix_len = 1000000000000, offset = -5")
        variant("int64-min-steps", "UPDATE points SET step = -9223372036854775808 WHERE step = 1")
        variant("recursive-view",
                "CREATE VIEW v AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r;")
        foreign = os.path.join(tmp, "foreign.db")
        sql(foreign, "PRAGMA page_size = 512; PRAGMA user_version = -1;", "CREATE TABLE metrics (key TEXT, value REAL);")
        with open(foreign, "rb") as f:
            put("store-open", "foreign", f.read())
        empty = os.path.join(tmp, "empty-foreign.db")
        sql(empty, "PRAGMA user_version = -1;")
        with open(empty, "rb") as f:
            put("store-open", "empty-foreign-negative-version", f.read())
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    safetensors_seeds()
    npz_seeds()
    jsonl_seeds()
    config_seeds()
    if len(sys.argv) > 1:
        store_seeds(sys.argv[1])
