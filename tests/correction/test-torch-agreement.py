#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The core against verl's own torch code on fresh random batches (skipped without torch or verl).

Usage: test-torch-agreement.py DRIFTWATCH_CLI [--verl-src DIR] [--seeds N]

For each seed a new float32 batch (shapes, lengths, noise, −5 outliers, log-ratios beyond ±20,
int64 mask) is written as .npz, run through `driftwatch-cli metrics --generation verl-0.7.1 --preset P
--arrays`, and through verl v0.7.1's compute_rollout_correction_and_rejection_mask (imported from a
checkout as tests/bench/bench-paired.py does: --verl-src, $VERL_SRC, or an installed verl). Asserted:
masks equal; every metric and every weight within rtol 2e-5 (float32 rounding, the golden tolerance,
§9.1); token-level weights (exp of one token's ℓ) bit-identical to torch's (the core computes
torch's own float32 exp, dw_torch_expf). Printed per preset:
the share of weights that differ from torch's and by how many ulps (a sequence weight is exp of a Σℓ that torch adds in float32 and the core in double),
and the largest metric difference in float32 ulps — the measured agreement with verl.

Exit 77 (skipped) without torch or a verl checkout.
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

SKIP = 77
PRESETS = [
    ("decoupled_token_is", dict(rollout_is="token", rollout_is_threshold=2.0)),
    ("decoupled_seq_is_rs", dict(rollout_is="sequence", rollout_is_threshold=2.0,
                                 rollout_rs="seq_sum_k1", rollout_rs_threshold="0.5_2.0")),
    ("decoupled_k3_rs_token_tis", dict(rollout_is="token", rollout_is_threshold=2.0,
                                       rollout_rs="seq_mean_k3", rollout_rs_threshold=0.01)),
]


def load_torch_and_helper(verl_src):
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        system = "/usr/bin/python3"
        if os.path.realpath(sys.executable) != os.path.realpath(system) and os.path.exists(system) \
                and not os.environ.get("DW_AGREEMENT_REEXEC"):
            os.environ["DW_AGREEMENT_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
        print("skipped: torch is not importable")
        sys.exit(SKIP)
    bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "bench-paired.py")
    spec = importlib.util.spec_from_file_location("dw_bench_paired", bench)
    paired = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(paired)
    helper, where = paired.load_helper(torch, verl_src)
    if helper is None:
        print(f"skipped: {where}")
        sys.exit(SKIP)
    return torch, helper, where


def make_batch(torch, seed):
    generator = torch.Generator().manual_seed(seed)
    rows = 8 + int(torch.randint(0, 56, (1,), generator=generator))
    cols = 16 + int(torch.randint(0, 700, (1,), generator=generator))
    uniform = lambda *shape: torch.rand(*shape, generator=generator, dtype=torch.float64)  # noqa: E731
    lengths = (cols * (0.1 + 0.9 * uniform(rows))).long()
    mask = (torch.arange(cols).unsqueeze(0) < lengths.unsqueeze(1)).long()
    old = -(torch.log(uniform(rows, cols) + 1e-12).abs()) * 0.8
    noise = (uniform(rows, cols) - 0.5) * 0.1 + (uniform(rows, cols) < 0.01) * -5.0
    noise += (uniform(rows, cols) < 0.002) * 30.0  # beyond the ±20 safety bound
    return old.float(), (old + noise).float(), mask


def ulps(first, second):
    if first == second or (math.isnan(first) and math.isnan(second)):
        return 0.0
    if not (math.isfinite(first) and math.isfinite(second)):
        return math.inf
    return abs(first - second) / (max(abs(first), abs(second)) * 2.0 ** -23)


def main():
    arguments = sys.argv[1:]
    cli = arguments[0]
    verl_src = os.environ.get("VERL_SRC")
    seeds = 6
    if "--verl-src" in arguments:
        verl_src = arguments[arguments.index("--verl-src") + 1]
    if "--seeds" in arguments:
        seeds = int(arguments[arguments.index("--seeds") + 1])
    torch, helper, where = load_torch_and_helper(verl_src)
    import numpy  # noqa: PLC0415 (torch's own dependency)
    torch.set_num_threads(1)
    failures, agreement, worst_metric = [], {}, (0.0, "")
    with tempfile.TemporaryDirectory() as directory:
        for seed in range(seeds):
            old, rollout, mask = make_batch(torch, seed)
            path = os.path.join(directory, f"step_{seed:06d}.npz")
            numpy.savez(path, old_log_prob=old.numpy(), rollout_log_prob=rollout.numpy(),
                        response_mask=mask.numpy())
            for preset, keywords in PRESETS:
                output = subprocess.run([cli, "metrics", path, "--generation", "verl-0.7.1",
                                         "--preset", preset, "--arrays"], capture_output=True,
                                        text=True, check=True).stdout
                core = json.loads(output)
                weights_proto, verl_mask, verl_metrics = \
                    helper.compute_rollout_correction_and_rejection_mask(old, rollout, mask, **keywords)
                what = f"seed {seed} {preset}"
                if core["arrays"]["modified_response_mask"] != verl_mask.tolist():
                    failures.append(f"{what}: masks differ")
                for key, expected in verl_metrics.items():
                    got = core["metrics"].get(key)
                    if got is None:
                        failures.append(f"{what}: no metric {key}")
                        continue
                    got = float(got)
                    close = abs(got - expected) <= 1e-7 + 2e-5 * abs(expected) or \
                        (math.isnan(got) and math.isnan(expected))
                    if not close:
                        failures.append(f"{what}: {key} core {got!r} verl {expected!r}")
                    if ulps(got, expected) > worst_metric[0]:
                        worst_metric = (ulps(got, expected), f"{what} {key}")
                verl_weights = weights_proto["rollout_is_weights"].flatten().tolist()
                core_weights = [w for row in core["arrays"]["rollout_is_weights"] for w in row]
                token_level = keywords["rollout_is"] == "token"
                total, differ, worst = agreement.get(preset, (0, 0, 0.0))
                for got, expected in zip(core_weights, verl_weights):
                    got = float(got)
                    distance = ulps(got, expected)
                    total += 1
                    differ += distance > 0
                    worst = max(worst, distance)
                    if (token_level and distance > 0) or not (
                            abs(got - expected) <= 2e-5 * abs(expected) or got == expected):
                        failures.append(f"{what}: weight core {got!r} verl {expected!r}")
                        break
                agreement[preset] = (total, differ, worst)
    print(f"verl helper {where}, torch {torch.__version__}, {seeds} batches × {len(PRESETS)} presets")
    for preset, (total, differ, worst) in agreement.items():
        print(f"weights of {preset} differing from torch's: {differ} of {total} "
              f"({100.0 * differ / max(total, 1):.2f} %), at most {worst:.1f} float32 ulps")
    print(f"largest metric difference: {worst_metric[0]:.1f} float32 ulps ({worst_metric[1]})")
    for failure in failures[:20]:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
