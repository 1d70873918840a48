#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""data/verl/driftwatch_verl_hook.py driven by a stand-in verl trainer for 20 steps.

The stand-in is a package named `verl` laid out like verl v0.9 where the hook attaches:
verl/trainer/ppo/ray_trainer.py imports compute_data_metrics from metric_utils and its fit()
calls it once per step with a DataProto-shaped batch (.batch tensors, .non_tensor_batch numpy
arrays) holding old_log_probs, rollout_log_probs, response_mask, responses, token_level_scores
and the prompt uids, right-padded past the longest response as verl pads them. The hook is
enabled the way Ray's worker_process_setup_hook enables it (install() with DRIFTWATCH_DUMP=1).

Checks: 20 atomic files (no temporary left), their tensors equal the batch (cut to the longest
response), `driftwatch-cli metrics` gives the same JSON on a hook file as on an .npz written here
independently with numpy, `ingest` + `recompute` use the run, sampling (every k-th step, at most
N sequences) works, a broken batch never stops the loop. Needs Debian's python3-torch: without
it the test is skipped (exit 77) with a message.
"""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"SKIP: python3-torch is not installed ({e}); the verl hook test needs it")
    sys.exit(77)

SRC = os.environ.get("G_TEST_SRCDIR") or os.path.join(os.path.dirname(__file__), "..")
HOOK_DIR = os.path.join(SRC, "..", "data", "verl")
CLI = os.environ.get("DW_CLI", "driftwatch-cli")

STANDIN = {
    "verl/__init__.py": "",
    "verl/trainer/__init__.py": "",
    "verl/trainer/ppo/__init__.py": "",
    "verl/trainer/ppo/metric_utils.py": """
        def compute_data_metrics(batch, use_critic=True):
            m = batch.batch["response_mask"].float()
            return {"response_length/mean": float(m.sum(-1).mean())}
    """,
    "verl/trainer/ppo/ray_trainer.py": """
        import numpy as np
        import torch

        from verl.trainer.ppo.metric_utils import (
            compute_data_metrics,
        )


        class DataProto:
            def __init__(self, batch, non_tensor_batch, meta_info=None):
                self.batch = batch
                self.non_tensor_batch = non_tensor_batch
                self.meta_info = meta_info or {}


        def make_batch(step, B=16, T=48, broken=False):
            g = torch.Generator().manual_seed(step)
            lens = torch.randint(4, T - 8, (B,), generator=g)
            cols = torch.arange(T)
            mask = (cols[None, :] < lens[:, None]).long()
            rollout = -torch.rand(B, T, generator=g) * 2
            old = rollout + torch.randn(B, T, generator=g) * (0.02 * step)
            scores = torch.zeros(B, T)
            scores[torch.arange(B), lens - 1] = (torch.arange(B) % 2).float()
            batch = {"old_log_probs": old * mask, "rollout_log_probs": rollout * mask,
                     "response_mask": mask,
                     "responses": torch.randint(0, 151000, (B, T), generator=g) * mask,
                     "token_level_scores": scores}
            if broken:
                del batch["rollout_log_probs"]
            uids = np.array([f"prompt-{step}-{i // 4}" for i in range(B)], dtype=object)
            return DataProto(batch, {"uid": uids})


        class RayPPOTrainer:
            def __init__(self, steps, broken_step=None):
                self.global_steps = 0
                self.steps = steps
                self.broken_step = broken_step
                self.batches = {}
                self.metrics = []

            def fit(self):
                for _ in range(self.steps):
                    self.global_steps += 1
                    batch = make_batch(self.global_steps, broken=self.global_steps == self.broken_step)
                    self.batches[self.global_steps] = batch
                    metrics = {}
                    metrics.update(compute_data_metrics(batch=batch, use_critic=False))
                    self.metrics.append(metrics)
    """,
}


def run(args, check=True):
    p = subprocess.run([CLI] + args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{args}: exit {p.returncode}: {p.stderr}")
    return p


def read_st(path):
    raw = open(path, "rb").read()
    (n,) = np.frombuffer(raw[:8], dtype="<u8")
    header = json.loads(raw[8:8 + int(n)])
    meta = header.pop("__metadata__")
    dt = {"F32": "<f4", "I64": "<i8", "F64": "<f8"}
    out = {}
    for k, v in header.items():
        a, b = v["data_offsets"]
        out[k] = np.frombuffer(raw[8 + int(n) + a:8 + int(n) + b], dtype=dt[v["dtype"]]).reshape(v["shape"])
    return out, meta


def main():
    tmp = tempfile.mkdtemp(prefix="dw-verl-hook-")
    for rel, text in STANDIN.items():
        path = os.path.join(tmp, "standin", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(textwrap.dedent(text))
    sys.path[:0] = [os.path.join(tmp, "standin"), HOOK_DIR]
    run_dir = os.path.join(tmp, "run")
    os.environ.update(DRIFTWATCH_DUMP="1", DRIFTWATCH_DUMP_DIR=os.path.join(run_dir, "batches"))

    import driftwatch_verl_hook
    driftwatch_verl_hook.install()  # as Ray's worker_process_setup_hook does, before verl loads
    from verl.trainer.ppo import ray_trainer

    assert hasattr(ray_trainer.compute_data_metrics, "__wrapped__"), "hook not attached"
    trainer = ray_trainer.RayPPOTrainer(20, broken_step=7)
    t0 = time.perf_counter()
    trainer.fit()
    loop = time.perf_counter() - t0

    files = sorted(os.listdir(os.path.join(run_dir, "batches")))
    want = [f"step_{s:06d}.safetensors" for s in range(1, 21) if s != 7]
    assert files == want, files  # step 7 lacked rollout_log_probs: warned, skipped, loop went on
    assert "driftwatch/dump_seconds" in trainer.metrics[0]
    assert "driftwatch/dump_seconds" not in trainer.metrics[6]

    for step in (1, 12, 20):
        got, meta = read_st(os.path.join(run_dir, "batches", f"step_{step:06d}.safetensors"))
        b = trainer.batches[step].batch
        cols = int(b["response_mask"].sum(-1).max())
        assert meta["step"] == str(step) and meta["format"] == "rlmon.rollout_batch"
        assert np.array_equal(got["old_log_prob"], b["old_log_probs"][:, :cols].float().numpy())
        assert np.array_equal(got["rollout_log_prob"], b["rollout_log_probs"][:, :cols].numpy())
        assert np.array_equal(got["response_mask"], b["response_mask"][:, :cols].numpy())
        assert np.array_equal(got["responses"], b["responses"][:, :cols].numpy())
        assert np.array_equal(got["reward"], b["token_level_scores"].sum(-1).numpy())
        assert list(got["prompt_uid"]) == [i // 4 for i in range(16)]
        assert json.loads(meta["prompt_uids"]) == [f"prompt-{step}-{g}" for g in range(4)]

        # the same data written here as .npz: `metrics` must say exactly the same
        npz = os.path.join(tmp, f"ref_{step}.npz")
        np.savez(npz, old_log_prob=b["old_log_probs"][:, :cols].numpy(),
                 rollout_log_prob=b["rollout_log_probs"][:, :cols].numpy(),
                 response_mask=b["response_mask"][:, :cols].numpy())
        st = os.path.join(run_dir, "batches", f"step_{step:06d}.safetensors")
        for preset in ("decoupled_token_is", "decoupled_seq_is_rs"):
            a = run(["metrics", st, "--preset", preset]).stdout
            r = run(["metrics", npz, "--preset", preset]).stdout
            assert a == r, (preset, a, r)

    # ingest the run and recompute it
    db = os.path.join(tmp, "store.db")
    run(["ingest", "--quiet", "--db", db, run_dir])
    rec = json.loads(run(["recompute", "--db", db, "--run", "1", "--preset",
                          "decoupled_token_is"]).stdout)
    assert len(rec["steps"]) == 19, rec.keys()
    tok = json.loads(run(["tokens", "--db", db, "--run", "1", "--step", "20", "--seq", "3",
                          "--format", "json"]).stdout)
    b = trainer.batches[20].batch
    n3 = int(b["response_mask"][3].sum())
    assert [t["token_id"] for t in tok["tokens"]] == b["responses"][3, :n3].tolist()

    # sampling: every 5th step, at most 3 sequences
    os.environ.update(DRIFTWATCH_DUMP_EVERY="5", DRIFTWATCH_DUMP_MAX_SEQS="3",
                      DRIFTWATCH_DUMP_DIR=os.path.join(tmp, "sampled", "batches"))
    ray_trainer.compute_data_metrics = ray_trainer.compute_data_metrics.__wrapped__
    driftwatch_verl_hook._patch(ray_trainer)
    ray_trainer.RayPPOTrainer(20).fit()
    files = sorted(os.listdir(os.path.join(tmp, "sampled", "batches")))
    assert files == [f"step_{s:06d}.safetensors" for s in (5, 10, 15, 20)], files
    got, _ = read_st(os.path.join(tmp, "sampled", "batches", files[0]))
    assert got["old_log_prob"].shape[0] == 3

    # cost: one dump of a real-size step (256 sequences × 8192 tokens, 2.1 M tokens)
    B, T = 256, 8192
    big = ray_trainer.DataProto({
        "old_log_probs": -torch.rand(B, T), "rollout_log_probs": -torch.rand(B, T),
        "response_mask": torch.ones(B, T, dtype=torch.int64),
        "responses": torch.randint(0, 151000, (B, T)), "token_level_scores": torch.zeros(B, T)},
        {"uid": np.array([str(i // 8) for i in range(B)], dtype=object)})
    t0 = time.perf_counter()
    driftwatch_verl_hook.dump_step(big, 1, os.path.join(tmp, "big"))
    dt = time.perf_counter() - t0
    size = os.path.getsize(os.path.join(tmp, "big", "step_000001.safetensors"))
    print(f"# 20-step stand-in loop with the hook: {loop:.3f} s")
    print(f"# dump of 256 x 8192 tokens: {dt:.3f} s, {size / 1e6:.1f} MB "
          f"({100 * dt / 60:.2f} % of a 60 s step, {100 * dt / 300:.2f} % of a 300 s step)")
    subprocess.run(["rm", "-rf", tmp], check=True)
    print("ok - verl hook")


def bench():
    """One real-size step (256 × 8192 tokens) dumped 5 times: the median, for .ci/bench."""
    import driftwatch_verl_hook

    tmp = tempfile.mkdtemp(prefix="dw-verl-bench-")
    B, T = 256, 8192

    class Batch:
        batch = {"old_log_probs": -torch.rand(B, T), "rollout_log_probs": -torch.rand(B, T),
                 "response_mask": torch.ones(B, T, dtype=torch.int64),
                 "responses": torch.randint(0, 151000, (B, T)),
                 "token_level_scores": torch.zeros(B, T)}
        non_tensor_batch = {"uid": np.array([str(i // 8) for i in range(B)], dtype=object)}

    times = []
    for step in range(1, 6):
        t0 = time.perf_counter()
        path = driftwatch_verl_hook.dump_step(Batch, step, tmp)
        times.append(time.perf_counter() - t0)
    size = os.path.getsize(path) / 1e6
    med = sorted(times)[2]
    print(f"verl hook dump 256x8192 (2.1 M tokens): median {med * 1000:.0f} ms, {size:.1f} MB, "
          f"{100 * med / 60:.2f} % of a 60 s step")
    subprocess.run(["rm", "-rf", tmp], check=True)


if __name__ == "__main__":
    if "--bench" in sys.argv:
        sys.path.insert(0, HOOK_DIR)
        bench()
    else:
        main()
