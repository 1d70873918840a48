#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes a real-size slime train dump for the batch-read benchmark (bench-batch.c) with Debian's
python3-torch: OUT/train_data/1.pt in slime's format_version 2 layout (as make-torch-dumps.py
writes it, docs/FORMATS-BATCH.md §2), 512 samples whose responses are 0.4–1.0 × 4096 tokens long
(the benchmark's standard batch), float32 log-probs, int64 tokens and loss masks.

Run: /usr/bin/python3 tests/batch/make-bench-pt.py OUT   (exit 77 when torch is missing; bench-batch
runs it with the interpreter meson found torch in)
"""
import os
import sys

try:
    import torch
except ImportError:
    sys.exit(77)

ROWS, COLS = 512, 4096
out = sys.argv[1]
os.makedirs(os.path.join(out, 'train_data'), exist_ok=True)
g = torch.Generator().manual_seed(42)
samples = []
for i in range(ROWS):
    resp = int(COLS * (0.4 + 0.6 * float(torch.rand(1, generator=g))))
    prompt = 64
    rollout = -torch.rand(resp, generator=g) * 3.0
    samples.append({'data_parallel_rank': 0, 'sample_index': i, 'rollout_position': i,
                    'tokens': torch.randint(0, 151000, (prompt + resp,), generator=g),
                    'total_lengths': prompt + resp, 'response_lengths': resp,
                    'loss_masks': torch.ones(resp, dtype=torch.int64), 'rewards': float(i % 2),
                    'log_probs': (rollout + torch.randn(resp, generator=g) * 0.05).float(),
                    'rollout_log_probs': rollout.float(),
                    'advantages': torch.randn(resp, generator=g).float()})
payload = {'format_version': 2, 'rollout_id': 1, 'rank': 0, 'samples': samples,
           'dp_shards': [{'rank': 0, 'data_parallel_rank': 0,
                          'sample_indices': list(range(ROWS)), 'partition': list(range(ROWS)),
                          'micro_batch_indices': [[list(range(ROWS))]], 'num_microbatches': [1],
                          'global_batch_sizes': [ROWS]}],
           'raw_reward': [float(i % 2) for i in range(ROWS)]}
torch.save(payload, os.path.join(out, 'train_data', '1.pt'))
