#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the batch test files of tests/data/batch/ and expected.json, independently of the C code.

Run with Debian's python3 (numpy): /usr/bin/python3 tests/batch/make-test-data.py SHARED_DIR OUT_DIR

expected.json lists, for every sample, golden batch and test file, what dw_batch_read_file() must
return: shape, dtypes, flags, step, and the SHA-256 of each padded [B,T] array in the dtype the
reader produces (log-probs float32/float64, mask in its own dtype, padding of packed/ragged
sources zero-filled), plus a few sums for humans. The safetensors files are written by hand here
(struct + json), following the format description, not the C writer.
"""
import hashlib
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np

shared, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
expected = {}

ST_DTYPES = {np.dtype('<f4'): 'F32', np.dtype('<f8'): 'F64', np.dtype('<f2'): 'F16',
             np.dtype('u1'): 'U8', np.dtype('bool'): 'BOOL', np.dtype('<i4'): 'I32',
             np.dtype('<i8'): 'I64'}


def st_write(path, tensors, metadata, bf16=()):
    """safetensors by the book: u64le header size, JSON header padded to 8, contiguous data."""
    header = {'__metadata__': metadata} if metadata is not None else {}
    blobs, off = [], 0
    for name, arr in tensors.items():
        if name in bf16:  # arr is uint16 bit patterns
            dt, raw = 'BF16', np.ascontiguousarray(arr, dtype='<u2').tobytes()
        else:
            arr = np.ascontiguousarray(arr)
            dt, raw = ST_DTYPES[arr.dtype], arr.tobytes()
        header[name] = {'dtype': dt, 'shape': list(arr.shape), 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def expect(key, old, roll, mask, adv=None, source=None, lossy=False, packed=False, step=-1):
    """old/roll/mask/adv: the padded arrays exactly as the reader must return them."""
    assert old.dtype == roll.dtype and old.dtype in (np.float32, np.float64)
    fin = np.isfinite(old)
    expected[key] = {
        'rows': int(old.shape[0]), 'cols': int(old.shape[1]),
        'lp_dtype': old.dtype.name, 'mask_dtype': mask.dtype.name,
        'source_lp_dtype': source or old.dtype.name, 'lossy': lossy, 'packed': packed,
        'step': step,
        'old_sha256': sha(old), 'rollout_sha256': sha(roll), 'mask_sha256': sha(mask),
        'adv_sha256': sha(adv.astype(old.dtype)) if adv is not None else None,
        'old_finite_sum': float(old[fin].astype(np.float64).sum()),
        'old_nan': int(np.isnan(old).sum()), 'old_posinf': int(np.isposinf(old).sum()),
        'old_neginf': int(np.isneginf(old).sum()),
        'old_negzero': int(((old == 0) & np.signbit(old)).sum()),
        'mask_row_sums': [float(x) for x in mask.astype(np.float64).sum(axis=1)],
    }


def lp_dtype(a, b):
    return np.float64 if np.float64 in (a.dtype, b.dtype) else np.float32


def from_npz(key, path, step=-1):
    z = np.load(path)
    dt = lp_dtype(z['old_log_prob'], z['rollout_log_prob'])
    mask = z['response_mask']
    if mask.dtype == np.float16:
        mask = mask.astype(np.float32)
    expect(key, z['old_log_prob'].astype(dt), z['rollout_log_prob'].astype(dt), mask,
           z['advantages'] if 'advantages' in z.files else None, step=step)


# --- shared samples and golden batches ------------------------------------------------------
sb = os.path.join(shared, 'samples', 'batch')
sample = np.load(os.path.join(sb, 'step_000001.npz'))
for name in sorted(os.listdir(os.path.join(shared, 'golden', 'batches'))):
    if name.endswith('.npz'):
        from_npz('shared:golden/batches/' + name, os.path.join(shared, 'golden', 'batches', name))
from_npz('shared:samples/batch/step_000001.npz', os.path.join(sb, 'step_000001.npz'), step=1)
# the safetensors sample holds the same arrays (written by the safetensors crate)
expected['shared:samples/batch/step_000001.safetensors'] = dict(
    expected['shared:samples/batch/step_000001.npz'])


def bf16_bits(a):
    """round-to-nearest-even float32 → bfloat16 bits (what torch .bfloat16() does)"""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return r


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


# the BF16 sample: the reader widens the stored BF16 bits exactly; read them from the file
def st_read(path):
    with open(path, 'rb') as f:
        raw = f.read()
    n = struct.unpack('<Q', raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    buf = raw[8 + n:]
    res = {}
    for k, v in hdr.items():
        if k == '__metadata__':
            continue
        b, e = v['data_offsets']
        np_dt = {'F32': '<f4', 'F64': '<f8', 'F16': '<f2', 'U8': 'u1', 'BOOL': 'bool', 'I32': '<i4',
                 'I64': '<i8', 'BF16': '<u2'}[v['dtype']]
        res[k] = (v['dtype'], np.frombuffer(buf[b:e], dtype=np_dt).reshape(v['shape']))
    return hdr.get('__metadata__', {}), res


meta, t = st_read(os.path.join(sb, 'step_000001_bf16.safetensors'))
conv = {k: (bf16_to_f32(a) if dt == 'BF16' else a) for k, (dt, a) in t.items()}
expect('shared:samples/batch/step_000001_bf16.safetensors', conv['old_log_prob'],
       conv['rollout_log_prob'], conv['response_mask'],
       conv['advantages'].astype(np.float32) if 'advantages' in conv else None,
       source='bfloat16', lossy=True, step=int(meta.get('step', -1)))

# JSONL sample: ragged rows → padded with zeros; float32 because every value is a float32
rows = [json.loads(line) for line in open(os.path.join(sb, 'step_000001.jsonl')) if line.strip()]


def ragged(rows, key, dt, fill=0):
    T = max(len(r['old_log_prob']) for r in rows)
    a = np.full((len(rows), T), fill, dtype=dt)
    for i, r in enumerate(rows):
        a[i, :len(r[key])] = r[key]
    return a


def all_f32(rows, keys):
    return all(np.isnan(v) or float(np.float32(v)) == v for r in rows for k in keys for v in r[k])


dt = np.float32 if all_f32(rows, ['old_log_prob', 'rollout_log_prob']) else np.float64
adv_rows = np.array([[r['advantage']] * len(r['old_log_prob']) for r in rows], dtype=object)
advp = np.zeros((len(rows), max(len(r['old_log_prob']) for r in rows)), dtype=dt)
for i, r in enumerate(rows):
    advp[i, :len(r['old_log_prob'])] = r['advantage']
expect('shared:samples/batch/step_000001.jsonl', ragged(rows, 'old_log_prob', dt),
       ragged(rows, 'rollout_log_prob', dt), ragged(rows, 'response_mask', np.uint8), advp,
       step=rows[0]['step'])

# --- our own test files ---------------------------------------------------------------------
# deflate npz of the sample
np.savez_compressed(os.path.join(out, 'step_000001_deflate.npz'),
                    **{k: sample[k] for k in sample.files})
expected['data:step_000001_deflate.npz'] = dict(expected['shared:samples/batch/step_000001.npz'])

# packed safetensors from the JSONL rows (slime layout), advantages per token
lens = [len(r['old_log_prob']) for r in rows]
cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
cat = lambda k, d: np.concatenate([np.asarray(r[k], dtype=d) for r in rows])
st_write(os.path.join(out, 'step_000001_packed.safetensors'),
         {'cu_seqlens': cu, 'advantages': np.concatenate([[r['advantage']] * n for r, n in zip(rows, lens)]).astype(np.float32),
          'old_log_prob': cat('old_log_prob', np.float32), 'rollout_log_prob': cat('rollout_log_prob', np.float32),
          'response_mask': cat('response_mask', np.uint8)},
         {'format': 'rlmon.rollout_batch', 'version': '1', 'step': '1', 'framework': 'slime',
          'layout': 'packed'})
e = dict(expected['shared:samples/batch/step_000001.jsonl'])
e['packed'] = True
expected['data:step_000001_packed.safetensors'] = e

# slime names (aliases), packed with int32 cu_seqlens, no metadata at all
st_write(os.path.join(out, 'slime_aliases.safetensors'),
         {'cu_seqlens': cu.astype(np.int32), 'log_probs': cat('old_log_prob', np.float32),
          'rollout_log_probs': cat('rollout_log_prob', np.float32),
          'loss_masks': cat('response_mask', np.int32)}, None)
expect('data:slime_aliases.safetensors', ragged(rows, 'old_log_prob', np.float32),
       ragged(rows, 'rollout_log_prob', np.float32), ragged(rows, 'response_mask', np.int32),
       packed=True)

# F16 log-probs, padded, bool mask
o16, r16 = sample['old_log_prob'].astype(np.float16), sample['rollout_log_prob'].astype(np.float16)
st_write(os.path.join(out, 'step_000003_f16.safetensors'),
         {'old_log_prob': o16, 'rollout_log_prob': r16,
          'response_mask': sample['response_mask'].astype(bool)},
         {'format': 'rlmon.rollout_batch', 'version': '1', 'layout': 'padded'})
expect('data:step_000003_f16.safetensors', o16.astype(np.float32), r16.astype(np.float32),
       sample['response_mask'].astype(bool), source='float16', lossy=True, step=3)

# BF16 only for the rollout side; float64 old → float64 batch, still lossy
rb = bf16_bits(sample['rollout_log_prob'])
st_write(os.path.join(out, 'mixed_bf16_f64.safetensors'),
         {'old_log_prob': sample['old_log_prob'].astype(np.float64), 'rollout_log_prob': rb,
          'response_mask': sample['response_mask']},
         {'step': '12'}, bf16=('rollout_log_prob',))
expect('data:mixed_bf16_f64.safetensors', sample['old_log_prob'].astype(np.float64),
       bf16_to_f32(rb).astype(np.float64), sample['response_mask'], source='bfloat16', lossy=True,
       step=12)

# non-finite and signed-zero log-probs at valid positions; masks with values other than 0/1
rng = np.random.default_rng(7)
old = (-rng.random((4, 6))).astype(np.float32)
roll = (-rng.random((4, 6))).astype(np.float32)
old[0, 0], old[0, 1], old[1, 2], old[2, 3] = np.nan, np.inf, -np.inf, -0.0
roll[3, 0] = -0.0
maskf = np.array([[1, 1, 1, 0, 0, 0], [2, -1, 0.5, 1, 0, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0]],
                 dtype=np.float32)
st_write(os.path.join(out, 'nonfinite.safetensors'),
         {'old_log_prob': old, 'rollout_log_prob': roll, 'response_mask': maskf}, {'step': '5'})
expect('data:nonfinite.safetensors', old, roll, maskf, step=5)

# Fortran order, big-endian and v2/v3 .npy headers inside an npz, int32 mask with 3 and -1
def npy_bytes(a, version=None):
    bio = io.BytesIO()
    np.lib.format.write_array(bio, a, version=version, allow_pickle=False)
    return bio.getvalue()


o = (-rng.random((3, 5))).astype(np.float64)
r = (-rng.random((3, 5))).astype(np.float64)
m = np.array([[1, 1, 1, 0, 0], [3, -1, 1, 1, 1], [1, 0, 1, 0, 0]], dtype=np.int32)
with zipfile.ZipFile(os.path.join(out, 'layouts.npz'), 'w', zipfile.ZIP_DEFLATED) as zf:
    zf.writestr('old_log_prob.npy', npy_bytes(np.asfortranarray(o), (2, 0)))
    zf.writestr('rollout_log_prob.npy', npy_bytes(r.astype('>f8'), (3, 0)))
    zf.writestr('response_mask.npy', npy_bytes(m.astype('>i4'), (1, 0)))
    zf.writestr('responses.npy', npy_bytes(np.zeros((3, 5), dtype='<c8')))  # ignored member
    zf.writestr('notes.txt', 'not an array')
assert np.load(os.path.join(out, 'layouts.npz'))['old_log_prob'].flags.f_contiguous
expect('data:layouts.npz', o, r, m)

# a sibling set of .npy files (PREFIX.<tensor>.npy), float16 mask → float32
os.makedirs(os.path.join(out, 'npyset'), exist_ok=True)
o, r = (-rng.random((2, 7))).astype(np.float32), (-rng.random((2, 7))).astype(np.float32)
m = np.array([[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]], dtype=np.float16)
np.save(os.path.join(out, 'npyset', 'step_000007.old_log_prob.npy'), o)
np.save(os.path.join(out, 'npyset', 'step_000007.rollout_log_prob.npy'), r)
np.save(os.path.join(out, 'npyset', 'step_000007.response_mask.npy'), m)
expect('data:npyset/step_000007.old_log_prob.npy', o, r, m.astype(np.float32), step=7)

# JSONL: NaN/Infinity/null, bool masks, per-token advantages, a blank line, extra keys, float64
lines = [
    {'step': 9, 'sample': 0, 'old_log_prob': [-0.5, float('nan'), -1e-300], 'rollout_log_prob': [-0.25, -1.0, float('-inf')],
     'response_mask': [True, False, True], 'advantages': [0.5, 0.5, 0.5], 'meta': {'a': [1, {'b': None}]}},
    {'step': 9, 'sample': 1, 'old_log_prob': [-0.1], 'rollout_log_prob': [float('inf')],
     'response_mask': [True], 'advantages': [-1.0], 'text': 'x\\"y'},
]
with open(os.path.join(out, 'ragged.jsonl'), 'w') as f:
    f.write(json.dumps(lines[0]) + '\n\n' + json.dumps(lines[1]) + '\n')
oj = np.array([[-0.5, np.nan, -1e-300], [-0.1, 0, 0]])
rj = np.array([[-0.25, -1.0, -np.inf], [np.inf, 0, 0]])
mj = np.array([[True, False, True], [True, False, False]])
aj = np.array([[0.5, 0.5, 0.5], [-1.0, 0, 0]])
expect('data:ragged.jsonl', oj, rj, mj, aj, step=9)

# --- bad inputs built here (the rest are built by mutation in test-batch.c) -----------------
bad = os.path.join(out, 'bad')
os.makedirs(bad, exist_ok=True)
# central directory claims a 2 GiB member: must be refused before allocating
# (a deflate member whose uncompressed size, in the local and central headers, says 2 GiB)
bio = io.BytesIO()
with zipfile.ZipFile(bio, 'w', zipfile.ZIP_DEFLATED) as zf:
    zf.writestr('old_log_prob.npy', npy_bytes(np.zeros((2, 2), np.float32)))
raw = bytearray(bio.getvalue())
struct.pack_into('<I', raw, 22, 0x7FFFFFF0)
cd = raw.rfind(b'PK\x01\x02')
struct.pack_into('<I', raw, cd + 24, 0x7FFFFFF0)
open(os.path.join(bad, 'huge_member.npz'), 'wb').write(raw)
# .npy header declaring a 10^12 x 10^12 array in 64 bytes of data
h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000, 1000000000000), }"
h += b' ' * (-(10 + len(h) + 1) % 64) + b'\n'
open(os.path.join(bad, 'huge_shape.npy'), 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h + bytes(64))
# safetensors header length of 2^60
open(os.path.join(bad, 'huge_header.safetensors'), 'wb').write(struct.pack('<Q', 1 << 60) + b'{}')
# safetensors whose offsets overlap
h = json.dumps({'old_log_prob': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]},
                'rollout_log_prob': {'dtype': 'F32', 'shape': [2], 'data_offsets': [4, 12]}}).encode()
h += b' ' * (-len(h) % 8)
open(os.path.join(bad, 'overlap.safetensors'), 'wb').write(struct.pack('<Q', len(h)) + h + bytes(12))

# rollout [3,5] against old [3,4]; int64 log-probs; a 3-D batch; a complex .npy
t34 = np.zeros((3, 4), np.float32)
np.savez(os.path.join(bad, 'shape_mismatch.npz'), old_log_prob=t34,
         rollout_log_prob=np.zeros((3, 5), np.float32), response_mask=t34)
np.savez(os.path.join(bad, 'int_logprobs.npz'), old_log_prob=np.zeros((3, 4), np.int64),
         rollout_log_prob=t34, response_mask=t34)
np.savez(os.path.join(bad, 'three_d.npz'), old_log_prob=np.zeros((2, 3, 4), np.float32),
         rollout_log_prob=np.zeros((2, 3, 4), np.float32), response_mask=np.zeros((2, 3, 4), np.float32))
np.save(os.path.join(bad, 'complex.npy'), np.zeros(3, np.complex64))
# a 3-D Fortran-order array for dw_batch_read_npy_array(): values 0..23 in C order
np.save(os.path.join(out, 'fortran3d.npy'), np.asfortranarray(np.arange(24, dtype='>i2').reshape(2, 3, 4)))

with open(os.path.join(out, 'expected.json'), 'w') as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write('\n')
print(f'{len(expected)} expectations written to {out}/expected.json')
