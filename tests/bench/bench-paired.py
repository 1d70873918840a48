#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Paired benchmark: Driftwatch's correction core against verl's own torch code, same machine, same run.

Usage: bench-paired.py BENCH_CORRECTION [--runs N] [--verl-src DIR]

Alternates N times: one run of the C benchmark (bench-correction --only=…) on the three benchmark
configs, then verl's rollout-correction helper (verl/trainer/ppo/rollout_corr_helper.py of a verl
checkout at v0.7.1, the release whose presets the C benchmark's unprefixed rows are) on a batch of
the same shape and distribution: 512×4096 float32, int64 mask, ~70 % valid, torch on 1 thread.
Both sides are timed the same way (median of repeats within a round), in wall time and in process
CPU time (the latter barely moves on a loaded machine, where torch's wall time suffers more than
the C core's); each round's ratio is C tokens/s ÷ torch tokens/s, and the median of the rounds'
ratios is printed per config.

verl's helper is imported from the checkout (--verl-src, else $VERL_SRC, else an installed `verl`).
Its heavy imports (tensordict, transformers, ray, the config dataclasses) are replaced by small
stand-ins: masked_sum / masked_mean are written here with torch's semantics (where(mask, v, 0)·mask
summed; divided by Σmask + 1e-8), DataProto.from_dict returns its dict. Nothing of verl is copied.

Exit 77 (meson's "skipped") when torch is absent or no verl checkout is found, so .ci/bench stays
green on a machine without them.
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import time
import types

SKIP = 77
N_ROWS, N_COLS = 512, 4096
# (C preset name, verl keyword arguments): the v0.7.1 presets of the benchmark table
CONFIGS = [
    ("decoupled_token_is", dict(rollout_is="token", rollout_is_threshold=2.0)),
    ("decoupled_seq_is_rs", dict(rollout_is="sequence", rollout_is_threshold=2.0,
                                 rollout_rs="seq_sum_k1", rollout_rs_threshold="0.5_2.0")),
    ("decoupled_k3_rs_token_tis", dict(rollout_is="token", rollout_is_threshold=2.0,
                                       rollout_rs="seq_mean_k3", rollout_rs_threshold=0.01)),
]


def install_stand_ins(torch):
    """The modules verl's helper imports besides torch, reduced to what it calls."""
    def masked_sum(values, mask, axis=None):
        kept = torch.where(mask.bool(), values, 0.0)
        return (kept * mask).sum() if axis is None else (kept * mask).sum(axis)

    def masked_mean(values, mask, axis=None):
        total = mask.sum() if axis is None else mask.sum(axis)
        return masked_sum(values, mask, axis) / (total + 1e-8)

    class DataProto:
        @staticmethod
        def from_dict(tensors):
            return tensors

    functional = types.ModuleType("verl.utils.torch_functional")
    functional.masked_sum = masked_sum
    functional.masked_mean = masked_mean
    functional.distributed_masked_mean = lambda values, mask, *rest, **named: masked_mean(values, mask)
    protocol = types.ModuleType("verl.protocol")
    protocol.DataProto = DataProto
    names = {
        "verl": None, "verl.utils": None, "verl.utils.torch_functional": functional,
        "verl.protocol": protocol, "verl.trainer": None, "verl.trainer.config": None,
        "verl.trainer.config.algorithm": None, "verl.workers": None, "verl.workers.config": None,
        "verl.workers.config.actor": None,
    }
    for name, module in names.items():
        if module is None:
            module = types.ModuleType(name)
            module.__path__ = []
        sys.modules[name] = module
    sys.modules["verl.trainer.config.algorithm"].RolloutCorrectionConfig = object
    sys.modules["verl.workers.config.actor"].PolicyLossConfig = object
    sys.modules["verl"].utils = sys.modules["verl.utils"]
    sys.modules["verl.utils"].torch_functional = functional


def load_helper(torch, verl_src):
    if verl_src:
        path = os.path.join(verl_src, "verl", "trainer", "ppo", "rollout_corr_helper.py")
        if not os.path.exists(path):
            return None, f"no {path}"
        install_stand_ins(torch)
        spec = importlib.util.spec_from_file_location("dw_paired_verl_helper", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, path
    try:
        from verl.trainer.ppo import rollout_corr_helper  # noqa: PLC0415
    except ImportError as error:
        return None, f"verl not importable ({error}); pass --verl-src"
    return rollout_corr_helper, rollout_corr_helper.__file__


def make_batch(torch, seed=1):
    """Same distribution as bench-correction.c: lengths uniform in [0.4T, T], ℓ noise ±0.05 plus
    a −5 outlier on 0.1 % of tokens."""
    generator = torch.Generator().manual_seed(seed)
    uniform = lambda *shape: torch.rand(*shape, generator=generator, dtype=torch.float64)  # noqa: E731
    lengths = (N_COLS * (0.4 + 0.6 * uniform(N_ROWS))).long()
    mask = (torch.arange(N_COLS).unsqueeze(0) < lengths.unsqueeze(1)).long()
    old = -(torch.log(uniform(N_ROWS, N_COLS) + 1e-12).abs()) * 0.8
    noise = (uniform(N_ROWS, N_COLS) - 0.5) * 0.1 + (uniform(N_ROWS, N_COLS) < 0.001) * -5.0
    return old.float(), (old + noise).float(), mask, float(mask.sum())


def time_torch(helper, batch, arguments, repeats):
    """(median wall seconds, median process CPU seconds) of verl's call"""
    old, rollout, mask, _ = batch
    times, cpu_times = [], []
    for _ in range(repeats):
        start, cpu_start = time.perf_counter(), time.process_time()
        helper.compute_rollout_correction_and_rejection_mask(old, rollout, mask, **arguments)
        times.append(time.perf_counter() - start)
        cpu_times.append(time.process_time() - cpu_start)
    return statistics.median(times), statistics.median(cpu_times)


def run_c(binary, repeats):
    names = ",".join(name for name, _ in CONFIGS)
    output = subprocess.run([binary, f"--only={names}", str(repeats)], check=True,
                            capture_output=True, text=True).stdout
    rates, cpu_rates, floor = {}, {}, None
    for line in output.splitlines():
        fields = line.split()
        if line.startswith("[plain read of the inputs]"):
            floor = float(fields[6])
        elif fields and fields[0] in dict(CONFIGS):
            rates[fields[0]] = float(fields[2])
        elif len(fields) == 4 and fields[0] == "cpu" and fields[1] in dict(CONFIGS):
            cpu_rates[fields[1]] = float(fields[3])
    return rates, cpu_rates, floor


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bench")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--verl-src", default=os.environ.get("VERL_SRC"))
    options = parser.parse_args()
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        # Debian's python3-torch lives beside the system interpreter, which a pyenv or venv
        # python3 on PATH hides: try that one once before giving up
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system) \
                and not os.environ.get("DW_PAIRED_REEXEC"):
            os.environ["DW_PAIRED_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
        print("paired benchmark skipped: torch is not importable")
        return SKIP
    torch.set_num_threads(1)
    helper, where = load_helper(torch, options.verl_src)
    if helper is None:
        print(f"paired benchmark skipped: {where}")
        return SKIP
    batch = make_batch(torch)
    print(f"paired: {N_ROWS}x{N_COLS} float32, mask int64, {100 * batch[3] / (N_ROWS * N_COLS):.1f}% "
          f"valid, 1 thread, torch {torch.__version__}, verl helper {where}, {options.runs} rounds")
    ratios = {name: [] for name, _ in CONFIGS}
    cpu_ratios = {name: [] for name, _ in CONFIGS}
    c_rates = {name: [] for name, _ in CONFIGS}
    t_rates = {name: [] for name, _ in CONFIGS}
    floors = []
    for _ in range(options.runs):
        rates, cpu_rates, floor = run_c(options.bench, options.repeats)
        floors.append(floor)
        for name, arguments in CONFIGS:
            seconds, cpu_seconds = time_torch(helper, batch, arguments, options.repeats)
            torch_rate = batch[3] / seconds / 1e6
            c_rates[name].append(rates[name])
            t_rates[name].append(torch_rate)
            ratios[name].append(rates[name] / torch_rate)
            cpu_ratios[name].append(cpu_rates[name] / (batch[3] / cpu_seconds / 1e6))
    for name, _ in CONFIGS:
        print(f"paired {name}: C {statistics.median(c_rates[name]):.1f} M tok/s, verl torch "
              f"{statistics.median(t_rates[name]):.1f} M tok/s, ratio median "
              f"{statistics.median(ratios[name]):.1f}x (min {min(ratios[name]):.1f}x, "
              f"max {max(ratios[name]):.1f}x)")
        print(f"paired {name} CPU time: ratio median {statistics.median(cpu_ratios[name]):.1f}x "
              f"(min {min(cpu_ratios[name]):.1f}x, max {max(cpu_ratios[name]):.1f}x)")
    print(f"paired read-once floor: {statistics.median(floors):.1f} M tok/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
