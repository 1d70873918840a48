#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Test fixture helper: dump an .npz batch as a trivial raw file the golden test reads.

Used only by tests until core/batch's dw_batch_read_file() lands (see test-golden.c).
Format: one text line "B T <lp dtype> <mask dtype>\n", then old, rollout, mask as C-order bytes.
"""
import sys

import numpy as np

src, dst = sys.argv[1], sys.argv[2]
z = np.load(src)
old, roll, mask = z["old_log_prob"], z["rollout_log_prob"], z["response_mask"]
with open(dst, "wb") as f:
    f.write(f"{old.shape[0]} {old.shape[1]} {old.dtype.name} {mask.dtype.name}\n".encode())
    f.write(np.ascontiguousarray(old).tobytes())
    f.write(np.ascontiguousarray(roll).tobytes())
    f.write(np.ascontiguousarray(mask).tobytes())
