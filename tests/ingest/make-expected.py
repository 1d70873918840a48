#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes tests/data/ingest/expected/<name>.tsv: the points each input must give (tag, step,
value as repr), derived independently of the C readers: tfevents and .wandb through the shared
reference readers (../shared/reference/tfevents_dump.py, wandb_log.py), JSONL through Python's
json module, consoles through FORMATS.md's regex / ast.literal_eval, CSV through the csv module.

    python3 tests/ingest/make-expected.py /work/shared
"""
import ast, collections, csv, json, math, os, re, sys

shared = sys.argv[1]
sys.path.insert(0, os.path.join(shared, "reference"))
import tfevents_dump as T  # noqa: E402
import wandb_log as W  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
data = os.path.join(here, "..", "data", "ingest")
S = os.path.join(shared, "samples")
out_dir = os.path.join(data, "expected")


def write(name, pts):
    with open(os.path.join(out_dir, name + ".tsv"), "w") as f:
        for tag, step, val in pts:
            f.write(f"{tag}\t{step}\t{float(val)!r}\n")


VAL = re.compile(r"^(?P<key>.+):(?:np\.(?:float|int|uint)\d+\()?(?P<val>[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|nan|inf)|True|False|np\.True_|np\.False_)\)?$")


def verl_console(path):
    pts = []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line.rstrip("\n"))
        line = re.sub(r"^\s*\([^)]*pid=[^)]*\)\s*", "", line)
        if not re.match(r"^step:\d+( - |$)", line):
            continue
        fields = line.split(" - ")
        step = int(fields[0][5:])
        for f in fields[1:]:
            m = VAL.match(f)
            if not m:
                continue
            v = m.group("val")
            v = {"True": 1.0, "False": 0.0, "np.True_": 1.0, "np.False_": 0.0}.get(v, v)
            pts.append((m.group("key"), step, float(v)))
    return pts


def verl_jsonl(path):
    pts = []
    for line in open(path):
        o = json.loads(line)
        for k, v in o["data"].items():
            if v is None:
                v = math.nan
            if isinstance(v, bool) or isinstance(v, (int, float)):
                pts.append((k, o["step"], float(v)))
    return pts


def tfevents(path):
    blob = open(path, "rb").read()
    pts = []
    for off, status, data in T.iter_records(blob):
        if status != "ok":
            continue
        ev = T.decode_event(data)
        for item in ev["values"]:
            if item["tag"] is None:
                continue
            if item["simple_value"] is not None:
                pts.append((item["tag"], ev["step"], item["simple_value"]))
            elif item["tensor"] is not None:
                v = T.scalar_of(item["tensor"])
                if v is not None:
                    pts.append((item["tag"], ev["step"], v))
    return pts


def slime_console(path):
    pts = []
    for line in open(path):
        line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line.rstrip("\n"))
        m = re.search(r" (\w+) (\d+): (\{.*\})", line)
        if not m:
            continue
        lit = re.sub(r"np\.\w+\(([^)]*)\)", r"\1", m.group(3))
        lit = re.sub(r"\bnan\b", "float('nan')", lit)
        lit = re.sub(r"\binf\b", "float('inf')", lit)
        try:
            # unknown names (a corrupt value) become None: that item is dropped, the rest kept
            d = eval(lit, {"__builtins__": {}, "float": float}, collections.defaultdict(lambda: None, float=float))
        except Exception:
            continue
        if not isinstance(d, dict):
            continue
        for k, v in d.items():
            if k in ("train/step", "rollout/step", "eval/step") or isinstance(v, str) or v is None:
                continue
            axis = "train/step" if k.startswith("train/") else "eval/step" if k.startswith("eval/") else "rollout/step"
            pts.append((k, int(d.get(axis, int(m.group(2)))), float(v)))
    return pts


def wandb_csv(path, panel=False):
    pts = []
    rows = list(csv.reader(open(path)))
    hdr = rows[0]
    for r in rows[1:]:
        if len(r) != len(hdr):
            continue
        step = r[0] if panel else r[hdr.index("_step")]
        for h, c in zip(hdr, r):
            if panel:
                if h == hdr[0] or h.endswith("__MIN") or h.endswith("__MAX"):
                    continue
                tag = h.split(" - ", 1)[1]
            else:
                if h in ("", "_step", "_runtime", "_timestamp"):
                    continue
                tag = h
            if c == "":
                continue
            try:
                v = float(c)
            except ValueError:
                continue
            pts.append((tag, int(float(step)), v))
    return pts


def wandb_offline(path):
    blob = open(path, "rb").read()
    pts = []
    for off, rec in W.iter_records(blob):
        h, step = W.decode_history(rec)
        if h is None:
            continue
        for k, vj in h.items():
            if k in ("_step", "_runtime", "_timestamp"):
                continue
            try:
                v = json.loads(vj)
            except Exception:
                continue
            if isinstance(v, (int, float)):
                pts.append((k, step or 0, float(v)))
    return pts


tb = os.path.join(S, "verl/tensorboard_log/verl_examples/qwen2_5_0_5b_grpo_rollout_corr")
write("verl_console_numpy1", verl_console(os.path.join(S, "verl/console_stdout_numpy1.log")))
write("verl_console_legacy", verl_console(os.path.join(S, "verl/console_legacy_v0.4.log")))
write("verl_console_ray_numpy2", verl_console(os.path.join(data, "verl_console_ray_numpy2.log")))
write("verl_jsonl", verl_jsonl(os.path.join(S, "verl/verl_examples/qwen2_5_0_5b_grpo_rollout_corr.jsonl")))
for f in sorted(os.listdir(tb)):
    write("verl_tb_" + f[-1], tfevents(os.path.join(tb, f)))
sl = os.path.join(S, "slime/tensorboard_log/slime-mis/qwen3-4B-mis")
write("slime_tb", tfevents(os.path.join(sl, os.listdir(sl)[0])))
ns = os.path.join(S, "tfevents_edge/torch_new_style")
write("torch_new_style", tfevents(os.path.join(ns, os.listdir(ns)[0])))
tt = os.path.join(S, "tfevents_edge/truncated_tail")
write("truncated_tail", tfevents(os.path.join(tt, os.listdir(tt)[0])))
write("tensorboardx", tfevents(os.path.join(data, "tensorboardx/events.out.tfevents.1767225600.host")))
write("bad_crc", tfevents(os.path.join(data, "bad_crc/events.out.tfevents.1795353214.vm.18664.0")))
write("slime_console", slime_console(os.path.join(data, "slime_console.log")))
write("wandb_api_csv", wandb_csv(os.path.join(S, "wandb_emulated/api_history_to_csv.csv")))
write("wandb_panel", wandb_csv(os.path.join(data, "wandb_panel.csv"), panel=True))
write("wandb_offline", wandb_offline(os.path.join(S, "wandb_emulated/offline-run-20260101_000000-r0llc0rr/run-r0llc0rr.wandb")))
