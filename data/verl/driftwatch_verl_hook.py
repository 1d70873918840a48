# SPDX-License-Identifier: GPL-3.0-or-later
"""Driftwatch's per-token dump for verl (v0.9): batches/step_NNNNNN.safetensors at every step.

verl keeps both engines' log-probs of every response in memory at each step but writes none of
them to disk. This module, shipped with Driftwatch, writes what the rollout-correction recompute
needs, one safetensors file per training step:

    old_log_prob      [B, T] float32   the training engine's log-probs (verl's old_log_probs)
    rollout_log_prob  [B, T] float32   the rollout engine's (verl's rollout_log_probs)
    response_mask     [B, T]           verl's response_mask, in its own dtype
    responses         [B, T] int64     response token ids
    prompt_uid        [B]    int64     group index of the prompt (same uid = same group); the
                                       uid strings are in the metadata "prompt_uids"
    reward            [B]    float32   token_level_scores summed over the response
    __metadata__      format "rlmon.rollout_batch", version "1", layout "padded", step, source

T is cut to the longest response of the step. Files are written to a temporary name and renamed,
so Driftwatch (live, with `driftwatch-cli watch`) never reads half a file.

Enable it from the trainer's command line, no change to verl (docs/VERL-HOOK.md):

    PYTHONPATH=/usr/share/driftwatch/python:$PYTHONPATH \\
    python3 -m verl.trainer.main_ppo ... \\
        +ray_kwargs.ray_init.runtime_env.worker_process_setup_hook=driftwatch_verl_hook.install \\
        +ray_kwargs.ray_init.runtime_env.env_vars.DRIFTWATCH_DUMP=1

Ray runs install() in every worker process, among them the TaskRunner that runs the training
loop. install() registers an import hook; when verl's trainer module is imported, the hook wraps
its compute_data_metrics(), which both the v0 (ray_trainer.py) and the v1 (v1/trainer_base.py)
loops call once per step with the step's finished batch. The wrapper calls verl's function
first, then dumps; an error in the dump is reported once and never stops training.

Environment:
    DRIFTWATCH_DUMP            1 to enable (install() does nothing otherwise)
    DRIFTWATCH_DUMP_DIR        output folder (default: beside verl's file logger output:
                               dirname($VERL_FILE_LOGGER_PATH)/batches, else
                               $VERL_FILE_LOGGER_ROOT/<project>/batches, else ./batches)
    DRIFTWATCH_DUMP_EVERY      dump every k-th step (default 1)
    DRIFTWATCH_DUMP_MAX_SEQS   at most N sequences per step, evenly spread (default: all)
"""
import importlib.abc
import importlib.util
import json
import os
import struct
import sys
import time

__all__ = ["install", "dump_step", "write_safetensors"]

_TRAINER_MODULES = ("verl.trainer.ppo.ray_trainer", "verl.trainer.ppo.v1.trainer_base")
_ST_DTYPES = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16",
              "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8", "uint8": "U8",
              "bool": "BOOL"}
_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        print(f"driftwatch_verl_hook: {message}", file=sys.stderr, flush=True)


def write_safetensors(path, tensors, metadata):
    """Writes @tensors (name -> torch tensor, C-contiguous on CPU) atomically to @path."""
    header = {"__metadata__": {k: str(v) for k, v in metadata.items()}}
    blobs, offset = [], 0
    for name, t in tensors.items():
        dtype = str(t.dtype).replace("torch.", "")
        if dtype == "bfloat16":
            raw = t.contiguous().view(dtype=__import__("torch").int16).numpy().tobytes()
        else:
            raw = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": _ST_DTYPES[dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def _rows(n, max_seqs):
    if not max_seqs or max_seqs >= n:
        return None
    return [round(i * (n - 1) / max(max_seqs - 1, 1)) for i in range(max_seqs)]


def dump_step(batch, step, out_dir, max_seqs=None):
    """Writes one step of a verl DataProto-shaped @batch (.batch: tensors, .non_tensor_batch:
    numpy arrays). Returns the path written, or None when the batch lacks the log-probs."""
    import numpy as np
    import torch

    tensors = batch.batch
    keys = set(tensors.keys())
    if "old_log_probs" not in keys or "rollout_log_probs" not in keys:
        _warn_once("keys", "the batch has no old_log_probs/rollout_log_probs (rollout "
                   "log-probs need actor_rollout_ref.rollout.calculate_log_probs=True); "
                   "nothing dumped")
        return None
    mask = tensors["response_mask"]
    rows = _rows(mask.shape[0], max_seqs)
    pick = (lambda t: t[rows]) if rows is not None else (lambda t: t)
    mask = pick(mask)
    valid = mask.reshape(mask.shape[0], -1).ne(0)
    cols = int(valid.any(0).nonzero().max().item()) + 1 if bool(valid.any()) else 0
    out = {
        "old_log_prob": pick(tensors["old_log_probs"])[:, :cols].float(),
        "rollout_log_prob": pick(tensors["rollout_log_probs"])[:, :cols].float(),
        "response_mask": mask[:, :cols],
    }
    if "responses" in keys:
        out["responses"] = pick(tensors["responses"])[:, :cols].long()
    if "token_level_scores" in keys:
        out["reward"] = pick(tensors["token_level_scores"]).float().sum(-1)
    metadata = {"format": "rlmon.rollout_batch", "version": "1", "layout": "padded",
                "step": int(step), "source": "driftwatch_verl_hook"}
    uids = getattr(batch, "non_tensor_batch", {}).get("uid")
    if uids is not None:
        uids = list(np.asarray(uids)[rows] if rows is not None else uids)
        first = {}
        group = [first.setdefault(str(u), len(first)) for u in uids]
        out["prompt_uid"] = torch.tensor(group, dtype=torch.int64)
        metadata["prompt_uids"] = json.dumps(list(first))
    out = {k: v.detach().to("cpu").contiguous() for k, v in out.items()}
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"step_{int(step):06d}.safetensors")
    write_safetensors(path, out, metadata)
    return path


def _out_dir(trainer):
    d = os.environ.get("DRIFTWATCH_DUMP_DIR")
    if d:
        return d
    p = os.environ.get("VERL_FILE_LOGGER_PATH")
    if p:
        return os.path.join(os.path.dirname(os.path.abspath(p)), "batches")
    project = None
    try:
        project = trainer.config.trainer.project_name
    except Exception:  # noqa: BLE001 - a stand-in trainer may have no config
        pass
    root = os.path.expanduser(os.environ.get("VERL_FILE_LOGGER_ROOT", "."))
    return os.path.join(root, project, "batches") if project else os.path.join(root, "batches")


def _wrap(compute_data_metrics):
    every = max(int(os.environ.get("DRIFTWATCH_DUMP_EVERY", "1") or 1), 1)
    max_seqs = int(os.environ.get("DRIFTWATCH_DUMP_MAX_SEQS", "0") or 0) or None

    def compute_data_metrics_and_dump(*args, **kwargs):
        result = compute_data_metrics(*args, **kwargs)
        try:
            caller = sys._getframe(1).f_locals
            trainer = caller.get("self")
            step = caller.get("global_steps", getattr(trainer, "global_steps", None))
            batch = kwargs.get("batch", args[0] if args else None)
            if step is not None and batch is not None and int(step) % every == 0:
                t0 = time.perf_counter()
                path = dump_step(batch, step, _out_dir(trainer), max_seqs)
                if path:
                    result = dict(result)
                    result["driftwatch/dump_seconds"] = time.perf_counter() - t0
        except Exception as e:  # noqa: BLE001 - a dump must never stop training
            _warn_once("error", f"dump failed, training goes on: {e!r}")
        return result

    compute_data_metrics_and_dump.__wrapped__ = compute_data_metrics
    return compute_data_metrics_and_dump


def _patch(module):
    f = getattr(module, "compute_data_metrics", None)
    if f is not None and not hasattr(f, "__wrapped__"):
        module.compute_data_metrics = _wrap(f)


class _Finder(importlib.abc.MetaPathFinder):
    """Patches verl's trainer modules right after they are imported."""

    def find_spec(self, name, path, target=None):
        if name not in _TRAINER_MODULES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_patch(module):
            exec_module(module)
            _patch(module)

        loader.exec_module = exec_and_patch
        return spec


def install():
    """Ray's worker_process_setup_hook: enable the dump in this process when DRIFTWATCH_DUMP=1."""
    if os.environ.get("DRIFTWATCH_DUMP", "") not in ("1", "true", "yes"):
        return
    for name in _TRAINER_MODULES:
        if name in sys.modules:
            _patch(sys.modules[name])
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
