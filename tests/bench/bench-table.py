#!/usr/bin/env python3
"""Turn the output of `meson test --benchmark` (meson-logs/testlog.json) into one Markdown table.

Every benchmark prints human-readable lines; the rules below pick the figures that matter and put
each beside its reference (verl's own torch code on the same machine) or the issue's aim. A line of
a benchmark that no rule knows is still listed (as "other"), so nothing measured is hidden, and a
known benchmark whose expected figure is missing makes the table fail (exit 1): an output format
change must not silently drop a figure.
"""
import json
import os
import platform
import re
import sys

NUM = r"([0-9]+(?:\.[0-9]+)?)"

# (benchmark, regex on one stdout line, measure label (may use groups), value format, reference)
RULES = [
    ("correction", r"^\[plain read of the inputs\]\s+" + NUM + r"\s+" + NUM,
     "kernels 512×4096 f32: read the inputs once (bandwidth floor)", "{0} ms, {1} M tok/s", ""),
    ("correction", r"^(decoupled_token_is)\s+" + NUM + r"\s+" + NUM,
     "kernels: token IS (decoupled_token_is)", "{1} ms, {2} M tok/s",
     "verl torch CPU 23 M tok/s; aim ≥ 575 (25×)"),
    ("correction", r"^(decoupled_seq_is_rs)\s+" + NUM + r"\s+" + NUM,
     "kernels: sequence IS + RS (decoupled_seq_is_rs)", "{1} ms, {2} M tok/s",
     "verl torch CPU 15–17 M tok/s; aim ≥ 400 (25×)"),
    ("correction", r"^(decoupled_k3_rs_token_tis)\s+" + NUM + r"\s+" + NUM,
     "kernels: K3 RS + token IS", "{1} ms, {2} M tok/s",
     "verl torch CPU 15–17 M tok/s; aim ≥ 400 (25×)"),
    ("correction", r"^(v0_9_0 decoupled_token_is)\s+" + NUM + r"\s+" + NUM,
     "kernels: verl v0.9.0 token IS (applied-weight metrics)", "{1} ms, {2} M tok/s",
     "verl torch CPU 23 M tok/s"),
    ("correction", r"^(v0_9_0 decoupled_token_icepop)\s+" + NUM + r"\s+" + NUM,
     "kernels: verl v0.9.0 token IcePop", "{1} ms, {2} M tok/s", ""),
    ("correction", r"^slime (builtin_vanilla|builtin_icepop)\s+" + NUM + r"\s+" + NUM,
     "kernels: slime built-in {0}", "{1} ms, {2} M tok/s", "aim ≥ 200"),
    ("correction", r"^([a-z_0-9]+(?: [a-z_0-9]+)?)\s+" + NUM + r"\s+" + NUM + r"$",
     "kernels: {0}", "{1} ms, {2} M tok/s", ""),
    ("row-pass", r"^\[row pass floor: plain read\]\s+" + NUM + r" ms\s+" + NUM,
     "row pass 512×4096 f32: read the inputs once (floor)", "{0} ms, {1} M tok/s", ""),
    ("row-pass", r"^\[row pass (token IS|seq k1 RS)\]\s+" + NUM + r" ms\s+" + NUM
     + r" M tok/s\s+" + NUM + r"x the floor \(CPU time " + NUM + r"x\)",
     "row pass (mask → float, fused pass), {0}",
     "{1} ms, {2} M tok/s, {3}× the floor (CPU time {4}×)", "aim ≤ 2× the floor"),
    ("paired", r"^paired ([a-z_0-9]+): C " + NUM + r" M tok/s, verl torch " + NUM
     + r" M tok/s, ratio median " + NUM + r"x \(min " + NUM + r"x, max " + NUM + r"x\)",
     "paired with verl's torch code: {0}", "{3}× (C {1}, torch {2} M tok/s; rounds {4}–{5}×)",
     "aim ≥ 25×"),
    ("paired", r"^paired ([a-z_0-9]+) CPU time: ratio median " + NUM + r"x \(min " + NUM
     + r"x, max " + NUM + r"x\)", "paired with verl's torch code, CPU time: {0}",
     "{1}× (rounds {2}–{3}×)", "aim ≥ 25×"),
    ("paired", r"^paired read-once floor: " + NUM, "paired: read-once floor during the rounds",
     "{0} M tok/s", ""),
    ("batch-read",
     r"^(\S+(?: \S+)?)\s+(tuned|default)\s+" + NUM + r" MB\s+median\s+" + NUM + r" ms\s+" + NUM,
     "batch read {0}, 512×4096 ({1} allocator)", "{3} ms, {4} M tok/s", ""),
    ("batch-read", r"^(torch \.pt): (skipped) \(python3-torch is missing\)",
     "batch read {0}, 512×4096 (tuned allocator)", "{1}: python3-torch is missing", ""),
    ("log-readers", r"^(verl-jsonl|tfevents|swanlab|verl-console): .* " + NUM + r" M scalars/s",
     "log parse {0}", "{1} M scalars/s", "aim ≥ 1 M/s (into the store)"),
    ("log-readers", r"^ingest (verl-jsonl|tfevents|verl-console|slime-console|wandb-csv|swanlab|"
     r"mlflow-file|trackio|mlflow-sqlite) into the store: .* " + NUM + r" M scalars/s wall, " + NUM
     + r" M scalars/s CPU",
     "log ingest {0} into the store (driftwatch-cli ingest, fresh store)",
     "{1} M scalars/s wall, {2} CPU", "aim ≥ 1 M/s"),
    ("log-readers", r"^ingest safetensors batches: .*: " + NUM + r" M tokens/s wall, " + NUM
     + r" M tokens/s CPU", "batch ingest safetensors into the store", "{0} M tokens/s wall, {1} CPU",
     ""),
    ("health", r"threshold metric .*?" + NUM + r" ns/point", "health: threshold rule",
     "{0} ns/point", ""),
    ("health", r"drift metric .*?" + NUM + r" ns/point", "health: drift rule", "{0} ns/point", ""),
    ("health", r"live step .*?" + NUM + r" µs", "health: one live step, 12 metrics", "{0} µs", ""),
    ("chart", r"^frame, 1M points .*median " + NUM + r" ms", "chart frame, 1 M points, 1600 px",
     "{0} ms", "aim < 8 ms"),
    ("chart", r"^frame, zoomed .*median " + NUM + r" ms", "chart frame, zoomed to 100 k of 1 M",
     "{0} ms", "aim < 8 ms"),
    ("chart", r"^load 1M points.*: " + NUM + r" ms", "chart: load 1 M points (pyramids + EMA)",
     "{0} ms", ""),
    ("chart", r"^first frame .*: " + NUM + r" ms", "chart first frame incl. bounds, 1 M points",
     "{0} ms", ""),
    ("chart", r"^memory, 10 series x 1M points.*: " + NUM + r" MB", "chart memory, 10 × 1 M points",
     "{0} MB", ""),
    ("watch", r"^watch latency (\S+)\s+(\d+) appends of (\d+) lines: median " + NUM + r" ms, p95 "
     + NUM + r" ms", "watch: file append → points in the store ({0})", "median {3} ms, p95 {4} ms",
     "aim < 1 s"),
    ("watch", r"^delay (\d+) ms, max-delay (\d+) ms", "watch: follower coalescing delay / max",
     "{0} ms / {1} ms", ""),
    ("whatif", r"^slider move, all kinds: p50 " + NUM + r" ms, p95 " + NUM + r" ms",
     "what-if slider move, 200×512×2048 run", "p50 {0} ms, p95 {1} ms", "aim p95 < 16 ms"),
    ("whatif", r"^slider move, ([^:]+): p50 " + NUM + r" ms, p95 " + NUM + r" ms",
     "what-if slider: {0}", "p50 {1} ms, p95 {2} ms", "aim p95 < 16 ms"),
    ("whatif", r"^precompute: " + NUM + r" ms per step", "what-if precompute per step (1 thread)",
     "{0} ms", ""),
    ("whatif", r"^spot checks .*: " + NUM + r" values", "what-if spot checks beyond 1 float32 ulp",
     "{0}", "0"),
    ("health", r"12 mismatch metrics: *" + NUM + r" ms", "health: 12 metrics of a 100 k-step run",
     "{0} ms", ""),
    ("whatif", r"^precompute memory: .*= " + NUM + r" bytes per valid token",
     "what-if precompute memory", "{0} B/token", ""),
    ("watch", r"^watch latency (\S+)\s+" + NUM + r" (.+?): median " + NUM + r" ms, p95 " + NUM
     + r" ms", "watch: append → in the store ({0}, {2})", "median {3} ms, p95 {4} ms", "aim < 1 s"),
    ("renderer", r"^renderer (\S+) \((\S+)\): slider move to its painted frame: median " + NUM
     + r" ms, max " + NUM + r" ms", "Tune slider move → painted frame, {0} renderer ({1}), Xvfb",
     "median {2} ms, max {3} ms", "aim ≤ 100 ms"),
    ("renderer", r"^renderer (\S+) \((\S+)\): idle Monitor page \(focus on \S+\): " + NUM
     + r" %", "idle Monitor page CPU, {0} renderer ({1}), Xvfb", "{2} % of a core", "aim ≤ 1 %"),
    ("renderer", r"^renderer (\S+) \((\S+)\): idle Monitor page, keyboard in the tag entry: "
     + NUM + r" %", "idle Monitor page CPU, keyboard in the tag entry, {0} renderer ({1}), Xvfb",
     "{2} % of a core", "aim ≤ 1 %"),
    ("whatif", r"^full recompute .*: " + NUM + r" s for " + NUM + r" steps",
     "full recompute of the run (1 thread)", "{0} s for {1} steps", ""),
    ("store", r"^ingest into the bounded store: " + NUM + r" steps/s, " + NUM + r" s per step of "
     + NUM + r" M valid tokens", "bounded store: ingest rate (CI run)",
     "{0} steps/s ({1} s per step of {2} M tokens)", "aim ≥ 0.1 steps/s (a step every 10 s) at 2 M tokens"),
    ("store", r"^store, default budget .*: " + NUM + r" MB for (\d+) steps, " + NUM
     + r" bytes per valid token", "bounded store: size with the default 64 MiB budget (CI run)",
     "{0} MB for {1} steps ({2} B/token)", ""),
    ("store", r"^store per referenced step: " + NUM + r" MB per step, " + NUM
     + r" bytes per valid token", "bounded store: growth per step beyond the budget",
     "{0} MB per step, {1} B/token", "aim ≤ 2 MB per step, ≤ 1 B/token (today 12.9)"),
    ("store", r"^store scaling to 3000 steps x 2 M valid tokens: " + NUM + r" GB",
     "bounded store: 3000 steps × 2 M tokens (linear in tokens from the CI run)", "{0} GB",
     "≤ 6 GB (2 MB × 3000)"),
    ("store", r"^what-if open from the bounded store .*: " + NUM + r" s for (\d+) steps, RSS "
     + NUM + r" MB \(\+" + NUM + r" MB\), peak " + NUM + r" MB",
     "what-if open from the bounded store (compact steps)",
     "{0} s for {1} steps, RSS {2} MB (+{3} MB), peak {4} MB",
     "aim ≤ 3 s and ≤ 2 GB for a 3000-step run (the time grows with the steps)"),
    ("store", r"^slider move on the bounded store .*: p50 " + NUM + r" ms, p95 " + NUM + r" ms",
     "what-if slider on the bounded store", "p50 {0} ms, p95 {1} ms", "aim p95 < 16 ms"),
    ("tune", r"^tune store, ([^:]+): " + NUM + r" MB per step, " + NUM + r" bytes per valid token",
     "Tune bench store, {0} (batches referenced)", "{1} MB per step, {2} B/token",
     "aim ≤ 2 MB per step, ≤ 1 B/token"),
    ("tune", r"^tune open \((\S+) steps\), ([^:]+): first result " + NUM
     + r" s \(CPU of all threads " + NUM + r" s\), every value exact " + NUM + r" s, peak RSS "
     + NUM + r" MB \(" + NUM + r" B per valid token\)",
     "Tune page open, {1} ({0} steps)",
     "first result {2} s (CPU {3} s), exact {4} s, peak RSS {5} MB ({6} B/token)",
     "aim ≤ 3 s, ≤ 2 GB"),
    ("tune", r"^tune slider move to its result \(([^)]+)\), ([^:]+): p50 " + NUM + r" ms, p95 "
     + NUM + r" ms",
     "Tune page slider move → what-if result set ({0}), {1}", "p50 {2} ms, p95 {3} ms",
     "aim p95 < 16 ms"),
    ("tune", r"^tune slider move CPU \([^)]*\) \(([^)]+)\), ([^:]+): p50 " + NUM + r" ms, p95 "
     + NUM + r" ms",
     "Tune page slider move, CPU of all threads ({0}), {1}", "p50 {2} ms, p95 {3} ms", ""),
    ("tune", r"^tune scaling from (.*): open ≈ " + NUM + r" ms per step \+ " + NUM
     + r" ms per M valid tokens; slider p95 " + NUM + r" and " + NUM + r" ms per step",
     "Tune page scaling law (two runs)",
     "open ≈ {1} ms per step + {2} ms per M tokens; slider p95 {3} / {4} ms per step ({0})", ""),
    ("verl-hook", r"^verl hook dump .*: median " + NUM + r" ms, " + NUM + r" MB, " + NUM + r" %",
     "verl hook: dump one 256×8192 step (2.1 M tokens, CPU tensors)",
     "{0} ms, {1} MB ({2} % of a 60 s step)", "aim < 1 % of a step"),
]
# first lines that describe a benchmark's setup: printed as notes under the table
SETUP = r"^(tune benchmark:|paired: |paired benchmark skipped|row pass: |bounded store benchmark:|renderers on this display|correction kernels:|preset |batch [0-9]+ x|health rules,|what-if benchmark:|delay [0-9]+ ms)"
# figures that must be present when their benchmark ran
REQUIRED = {
    "correction": ["kernels: token IS (decoupled_token_is)",
                   "kernels: verl v0.9.0 token IS (applied-weight metrics)"],
    "chart": ["chart frame, 1 M points, 1600 px"],
    "row-pass": ["row pass (mask → float, fused pass), token IS"],
    "batch-read": ["batch read torch .pt, 512×4096 (tuned allocator)"],
    "whatif": ["what-if slider move, 200×512×2048 run"],
    "store": ["bounded store: ingest rate (CI run)",
              "bounded store: size with the default 64 MiB budget (CI run)",
              "bounded store: growth per step beyond the budget",
              "bounded store: 3000 steps × 2 M tokens (linear in tokens from the CI run)",
              "what-if open from the bounded store (compact steps)",
              "what-if slider on the bounded store"],
    "watch": ["watch: file append → points in the store (in-process)",
              "watch: file append → points in the store (cli)"],
    "log-readers": ["log parse verl-jsonl", "log parse tfevents", "log parse swanlab",
                    "log parse verl-console"]
                   + [f"log ingest {f} into the store (driftwatch-cli ingest, fresh store)"
                      for f in ("verl-jsonl", "tfevents", "verl-console", "slime-console",
                                "wandb-csv", "swanlab", "mlflow-file", "trackio",
                                "mlflow-sqlite")],
    "tune": ["Tune page scaling law (two runs)"],
    "renderer": ["Tune slider move → painted frame, gl renderer (GskGLRenderer), Xvfb",
                 "Tune slider move → painted frame, cairo renderer (GskCairoRenderer), Xvfb",
                 "idle Monitor page CPU, gl renderer (GskGLRenderer), Xvfb",
                 "idle Monitor page CPU, cairo renderer (GskCairoRenderer), Xvfb"],
}


def machine():
    cpu = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, load {load:.1f}"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "build/meson-logs/testlog.json"
    results = [json.loads(line) for line in open(path) if line.strip()]
    rows, notes, missing, failed = [], [], [], []
    for r in results:
        name, out = r["name"], r.get("stdout") or ""
        if r.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP"):
            failed.append(name)
        seen = set()
        for line in out.splitlines():
            line = line.strip()
            if not line or line.startswith("[reference"):
                continue
            if re.search(SETUP, line):
                if not line.startswith("preset "):
                    notes.append(f"{name}: {line}")
                continue
            matched = False
            for bench, rx, label, fmt, ref in RULES:
                if bench != name:
                    continue
                m = re.search(rx, line)
                if not m:
                    continue
                lab = label.format(*m.groups())
                if lab in seen:
                    matched = True
                    break
                seen.add(lab)
                rows.append((name, lab, fmt.format(*m.groups()), ref))
                matched = True
                break
            if not matched:
                rows.append((name, "other", line, ""))
        for lab in REQUIRED.get(name, []):
            if lab not in seen:
                missing.append(f"{name}: {lab}")

    print(f"Machine: {machine()}")
    print()
    print("| benchmark | measure | result | reference / aim |")
    print("|---|---|---|---|")
    for name, lab, val, ref in rows:
        print(f"| {name} | {lab} | {val} | {ref} |")
    print()
    for n in notes:
        print(f"- {n}")
    print()
    print("Reference: verl's own rollout-correction code (torch CPU, 1 thread, glibc allocator "
          "tuned) on the same 512×4096 batch: 23 M valid tokens/s token IS, 15–17 M/s with "
          "sequence RS.")
    for m in missing:
        print(f"MISSING figure (benchmark output format changed?): {m}", file=sys.stderr)
    for f in failed:
        print(f"FAILED benchmark: {f}", file=sys.stderr)
    return 1 if missing or failed else 0


if __name__ == "__main__":
    sys.exit(main())
