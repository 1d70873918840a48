#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the torch .pt test dumps of tests/data/torch/ with Debian's python3-torch.

Run: /usr/bin/python3 tests/batch/make-torch-dumps.py tests/data/torch

The outputs are committed: CI never needs torch. Each case directory is laid out exactly as the
trainer writes it (read from the sources, see docs/FORMATS-BATCH.md §2):

  slime_v2/          slime ≥ #2266 (observability/train_data_utils.py, _build_dump_payload):
                     train_data/{id}.pt = {format_version 2, rollout_id, rank, samples, dp_shards}
                     + rollout_data/{id}.pt = {rollout_id, samples: [Sample.to_dict()]}
  slime_v2_p4/, slime_v2_p5/  the v2 layout saved with pickle_protocol 4 and 5 (torch.save's
                     default is 2)
  slime_v2_join/     the same, but the train dump has no rollout_log_probs: they come from the
                     rollout dump, joined on rollout_position
  slime_v1_cp1/      slime before #2266 (utils/train_dump_utils.py): train_data/{id}_{rank}.pt =
  slime_v1_cp2/        {rollout_id, rank, rollout_data: {column: [per local sample]}}; log_probs,
  slime_v1_cp4/        rollout_log_probs and advantages are the rank's context-parallel slice
                     (cp_utils.slice_log_prob_with_cp); cp1: dp 2; cp2: dp 2 × cp 2; cp4: cp 4
  slime_v1_cp2_cuda/ the cp2 dump as the GPUs saved it: storages located on 'cuda:N'
  slime_v1_cp2_join/ v1 cp 2 without rollout_log_probs in the train files: they come from
                     rollout_data/{id}.pt, joined on sample_indices = Sample.index
  slime_v1_tp2_cp2_pp2/  tensor parallel 2 (both TP ranks save the same slice), cp 2, pipeline
                     parallel 2 (the first stage's 4 files have no log_probs)
  slime_v1_cp2_missing/  the cp2 dump with rank 3's file missing: cannot be reassembled
  miles_cp2/         miles (utils/train_dump_utils.py): per-rank files that also say cp_rank,
                     cp_size and qkv_format ("thd")
  miles_bshd_cp2/    miles with qkv_format "bshd": chunks counted from rollout_data's
                     max_seq_lens (training_utils/data.py), here 40 for every sample
  hostile/           pickles that must be refused: posix.system at the top and inside a real
                     dump, 5000-deep nesting, a storage declaring 2^40 elements, a tensor
                     reaching past its storage, two data.pkl members, a truncated archive

Next to each dump, expected.safetensors holds the same data as the padded batch the reader must
return (float32 old_log_prob / rollout_log_prob / response_mask, int64 token_ids, float64
rewards), written by hand (struct + json) from the Python values, not by the C code.
"""
import io
import json
import math
import os
import pickle
import shutil
import struct
import sys
import zipfile

import torch

out = sys.argv[1]
torch.manual_seed(7)
ROLLOUT_ID = 3


def st_write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, (dt, shape, raw) in tensors.items():
        header[name] = {'dtype': dt, 'shape': shape, 'data_offsets': [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header['__metadata__'] = {'format': 'driftwatch-test', 'step': str(ROLLOUT_ID)}
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * (-len(h) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def make_samples(n, seed):
    """Full (un-sliced) per-sample data as a trainer holds it before CP slicing."""
    g = torch.Generator().manual_seed(seed)
    samples = []
    for i in range(n):
        prompt = int(torch.randint(2, 12, (1,), generator=g))
        resp = int(torch.randint(3, 24, (1,), generator=g))
        total = prompt + resp
        tokens = torch.randint(0, 50000, (total,), generator=g)
        rollout = -torch.rand(resp, generator=g) * 3.0
        # the training engine disagrees a little, and now and then a lot (catastrophic tokens)
        train = rollout + torch.randn(resp, generator=g) * 0.05
        if i % 3 == 1:
            train[resp // 2] = rollout[resp // 2] - 4.0
        loss_mask = torch.ones(resp, dtype=torch.int64)
        if resp > 5:
            loss_mask[-2:] = 0
        samples.append(dict(prompt=prompt, resp=resp, total=total, tokens=tokens,
                            rollout=rollout.float(), train=train.float(),
                            adv=torch.randn(resp, generator=g).float(),
                            loss_mask=loss_mask, reward=float(i % 2), index=100 + i))
    return samples


def expected(path, samples):
    """The padded batch in sample order (the reader's order)."""
    rows, cols = len(samples), max(s['resp'] for s in samples)
    old = torch.zeros(rows, cols, dtype=torch.float32)
    roll = torch.zeros(rows, cols, dtype=torch.float32)
    mask = torch.zeros(rows, cols, dtype=torch.float32)
    tok = torch.zeros(rows, cols, dtype=torch.int64)
    rew = torch.tensor([s['reward'] for s in samples], dtype=torch.float64)
    for b, s in enumerate(samples):
        r = s['resp']
        old[b, :r] = s['train']
        roll[b, :r] = s['rollout']
        mask[b, :r] = s['loss_mask'].float()
        tok[b, :r] = s['tokens'][-r:]
    st_write(path, {
        'old_log_prob': ('F32', [rows, cols], old.numpy().tobytes()),
        'rollout_log_prob': ('F32', [rows, cols], roll.numpy().tobytes()),
        'response_mask': ('F32', [rows, cols], mask.numpy().tobytes()),
        'token_ids': ('I64', [rows, cols], tok.numpy().tobytes()),
        'rewards': ('F64', [rows], rew.numpy().tobytes()),
    })


def cp_slice(x, total, resp, cp, rank, max_seq_len=None):
    """Rank @rank's part of a response-long tensor (slime cp_utils, restated; miles' "bshd"
    counts the chunks from the padded max_seq_len instead of the sample's length)."""
    if cp == 1:
        return x
    prompt = total - resp
    base = max_seq_len if max_seq_len is not None else total
    chunk = (base + 2 * cp - 1) // (2 * cp)
    parts = []
    for c0, c1 in ((rank * chunk, (rank + 1) * chunk),
                   ((2 * cp - rank - 1) * chunk, (2 * cp - rank) * chunk)):
        s, e = max(c0, prompt - 1), min(c1, total - 1)
        if s >= e:
            s = e = 0  # slime's empty slice: log_prob[-(prompt-1):-(prompt-1)]
            parts.append(x[0:0])
        else:
            parts.append(x[s - (prompt - 1):e - (prompt - 1)])
    return torch.cat(parts)


def rollout_dump(path, samples):
    """rollout_data/{id}.pt: Sample.to_dict() per sample (lists of Python numbers)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    dicts = []
    for s in samples:
        dicts.append({
            'group_index': s['index'] // 2, 'index': s['index'], 'rollout_id': None,
            'prompt': 'What is 2+2?', 'tokens': s['tokens'].tolist(),
            'multimodal_inputs': None, 'multimodal_train_inputs': None,
            'response': 'four', 'response_length': s['resp'], 'label': '4',
            'reward': s['reward'], 'loss_mask': s['loss_mask'].tolist(),
            'weight_versions': ['1'], 'rollout_log_probs': [float(v) for v in s['rollout']],
            'rollout_routed_experts': None, 'remove_sample': False, 'teacher_log_probs': None,
            'status': 'completed', 'metadata': {}, 'train_metadata': None,
            'spec_info': {'spec_accept_token_num': 0, 'spec_draft_token_num': 0},
            'prefix_cache_info': {'cached_tokens': 0, 'total_prompt_tokens': s['prompt']},
        })
    torch.save({'rollout_id': ROLLOUT_ID, 'samples': dicts}, path)


def v2_dump(case, samples, with_rollout_lp=True, protocol=2):
    d = os.path.join(out, case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'train_data'))
    # two DP shards gathered on rank 0, then sorted by rollout_position (the dump's own code)
    shards = [list(range(0, len(samples), 2)), list(range(1, len(samples), 2))]
    flat = []
    layout = []
    for dp, idxs in enumerate(shards):
        layout.append({'rank': dp * 2, 'data_parallel_rank': dp, 'sample_indices':
                       [samples[i]['index'] for i in idxs], 'partition': list(idxs),
                       'micro_batch_indices': [[list(range(len(idxs)))]],
                       'num_microbatches': [1], 'global_batch_sizes': [len(samples)]})
        for i in idxs:
            s = samples[i]
            sample = {'data_parallel_rank': dp, 'sample_index': s['index'],
                      'rollout_position': i, 'tokens': s['tokens'], 'total_lengths': s['total'],
                      'response_lengths': s['resp'], 'loss_masks': s['loss_mask'],
                      'rewards': s['reward'], 'log_probs': s['train'],
                      'advantages': s['adv'], 'returns': s['adv'].clone()}
            if with_rollout_lp:
                sample['rollout_log_probs'] = s['rollout']
            flat.append((i, sample))
    flat.sort(key=lambda p: p[0])
    payload = {'format_version': 2, 'rollout_id': ROLLOUT_ID, 'rank': 0,
               'samples': [p[1] for p in flat], 'dp_shards': layout,
               'raw_reward': [s['reward'] for s in samples]}
    torch.save(payload, os.path.join(d, 'train_data', f'{ROLLOUT_ID}.pt'), pickle_protocol=protocol)
    rollout_dump(os.path.join(d, 'rollout_data', f'{ROLLOUT_ID}.pt'), samples)
    expected(os.path.join(d, 'expected.safetensors'), samples)


def v1_dump(case, samples, dp, cp, miles=False, drop_rank=None, bshd_len=None, tp=1, pp=1,
            rollout_side=False):
    d = os.path.join(out, case)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'train_data'))
    order = []
    for dp_rank in range(dp):
        idxs = list(range(dp_rank, len(samples), dp))
        order += idxs
        local = [samples[i] for i in idxs]
        for cp_rank, tp_rank, pp_rank in [(c, t, p) for p in range(pp) for c in range(cp)
                                          for t in range(tp)]:
            # Megatron's order tp-cp-ep-dp-pp: tp fastest, then cp, dp, pp
            rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * pp_rank))
            # the training engine computes log-probs for the whole micro-batch, then splits:
            # per-sample tensors are views of one storage, as in the real dump
            def sl(x, s):
                return cp_slice(x, s['total'], s['resp'], cp, cp_rank, bshd_len)
            train_cat = torch.cat([sl(s['train'], s) for s in local])
            lens = [len(sl(s['train'], s)) for s in local]
            rollout_data = {
                'tokens': [s['tokens'] for s in local],
                'total_lengths': [s['total'] for s in local],
                'response_lengths': [s['resp'] for s in local],
                'loss_masks': [s['loss_mask'] for s in local],
                'rewards': [s['reward'] for s in local],
                'raw_reward': [s['reward'] for s in samples],
                'sample_indices': [s['index'] for s in local],
                'rollout_log_probs': [sl(s['rollout'], s) for s in local],
                'log_probs': list(torch.split(train_cat, lens)),
                'advantages': [sl(s['adv'], s) for s in local],
                'micro_batch_indices': [[list(range(len(local)))]],
                'num_microbatches': [1], 'global_batch_sizes': [len(samples)],
            }
            if pp_rank != pp - 1:
                del rollout_data['log_probs']  # only the last pipeline stage computes them
            if rollout_side:
                del rollout_data['rollout_log_probs']  # joined from rollout_data/ on the index
            payload = {'rollout_id': ROLLOUT_ID, 'rank': rank, 'rollout_data': rollout_data}
            if miles:
                payload.update(cp_rank=cp_rank, cp_size=cp,
                               qkv_format='bshd' if bshd_len else 'thd')
            if bshd_len:
                rollout_data['max_seq_lens'] = [bshd_len] * len(local)
            if rank == drop_rank:
                continue
            torch.save(payload, os.path.join(d, 'train_data', f'{ROLLOUT_ID}_{rank}.pt'))
    if rollout_side:
        rollout_dump(os.path.join(d, 'rollout_data', f'{ROLLOUT_ID}.pt'), samples)
    # the reader orders samples by sample_indices
    expected(os.path.join(d, 'expected.safetensors'),
             sorted(samples, key=lambda s: s['index']))


class Call:
    """Pickles as a call of os.system(*args), GLOBAL 'posix system' — an attacker's pickle."""
    def __init__(self, args):
        self.args = args


class HostilePickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Call):
            return (os.system, obj.args)
        return NotImplemented


def raw_pt(path, pkl, storages=None, prefix='archive'):
    """A torch-style zip around a hand-made pickle."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        z.writestr(f'{prefix}/data.pkl', pkl)
        for k, v in (storages or {}).items():
            z.writestr(f'{prefix}/data/{k}', v)
        z.writestr(f'{prefix}/version', b'3\n')


def hostile():
    d = os.path.join(out, 'hostile')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    marker = '/tmp/driftwatch-pwned'
    # 1. the classic: posix.system at the top (built by hand: pickling os.system itself would
    #    resolve to the running platform's module)
    pkl = (b'\x80\x02cposix\nsystem\nq\x00X' + struct.pack('<I', len('touch ' + marker))
           + ('touch ' + marker).encode() + b'\x85R.')
    raw_pt(os.path.join(d, 'posix_system.pt'), pkl)
    # 2. inside a valid v2 dump, as the value of one sample's key
    buf = io.BytesIO()
    samples = make_samples(2, 99)
    body = {'format_version': 2, 'rollout_id': 1, 'rank': 0, 'samples': [
        {'response_lengths': 2, 'total_lengths': 4, 'tokens': [1, 2, 3, 4],
         'log_probs': Call(('touch ' + marker,)),
         'rollout_log_probs': [-0.5, -0.25], 'loss_masks': [1, 1]}]}
    HostilePickler(buf, protocol=2).dump(body)
    raw_pt(os.path.join(d, 'posix_in_sample.pt'), buf.getvalue())
    del samples
    # 3. 100 000 nested lists
    raw_pt(os.path.join(d, 'deep.pt'), b'\x80\x02' + b']' * 5000 + b'a' * 4999 + b'.')
    # 4. a storage declaring 2^40 float32 elements
    pid = (b'(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu'
           b'\x8a\x06\x00\x00\x00\x00\x00\x01tQ')
    pkl = (b'\x80\x02}(X\x07\x00\x00\x00samples](}(X\x09\x00\x00\x00log_probsctorch._utils\n'
           b'_rebuild_tensor_v2\n(' + pid + b'K\x00\x8a\x06\x00\x00\x00\x00\x00\x01\x85K\x01\x85'
           b'\x89ccollections\nOrderedDict\n)RtRu' + b'eu.')
    raw_pt(os.path.join(d, 'huge_storage.pt'), pkl, {'0': b'\x00' * 16})
    # 5. a tensor whose size reaches far past its (small) storage
    pid = (b'(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu'
           b'K\x04tQ')
    pkl = (b'\x80\x02}(X\x07\x00\x00\x00samples](}(X\x09\x00\x00\x00log_probsctorch._utils\n'
           b'_rebuild_tensor_v2\n(' + pid + b'K\x00J\x00\x00\x00\x40\x85K\x01\x85'
           b'\x89ccollections\nOrderedDict\n)RtRu' + b'eu.')
    raw_pt(os.path.join(d, 'past_storage.pt'), pkl, {'0': b'\x00' * 16})
    # 6. two data.pkl members: an empty dict first, the real dump second (which one a loader
    #    takes is up to it; this reader refuses to guess)
    import warnings
    warnings.simplefilter('ignore')
    real = zipfile.ZipFile(os.path.join(out, 'slime_v2', 'train_data', f'{ROLLOUT_ID}.pt'))
    with zipfile.ZipFile(os.path.join(d, 'duplicate_pkl.pt'), 'w', zipfile.ZIP_STORED) as z:
        z.writestr('archive/data.pkl', b'\x80\x02}.')
        for info in real.infolist():
            z.writestr('archive/' + info.filename.split('/', 1)[1], real.read(info.filename))
    # 7. a truncated real dump (a file still being written)
    v2 = os.path.join(out, 'slime_v2', 'train_data', f'{ROLLOUT_ID}.pt')
    data = open(v2, 'rb').read()
    open(os.path.join(d, 'truncated.pt'), 'wb').write(data[:len(data) // 2])


def cuda_copy(src_case, case):
    """slime v1 saved the ranks' GPU tensors: the persistent ids say 'cuda:N', not 'cpu'. This
    machine has no GPU, so the location strings of a CPU dump are rewritten (protocol 2 has no
    frames, BINUNICODE carries its own length) and the archive is written again."""
    src = os.path.join(out, src_case, 'train_data')
    dst = os.path.join(out, case, 'train_data')
    shutil.rmtree(os.path.join(out, case), ignore_errors=True)
    os.makedirs(dst)
    for name in sorted(os.listdir(src)):
        rank = int(name.split('_')[1].split('.')[0])
        zin = zipfile.ZipFile(os.path.join(src, name))
        with zipfile.ZipFile(os.path.join(dst, name), 'w', zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                data = zin.read(info.filename)
                if info.filename.endswith('/data.pkl'):
                    loc = f'cuda:{rank % 8}'.encode()
                    data = data.replace(b'X\x03\x00\x00\x00cpu',
                                        b'X' + struct.pack('<I', len(loc)) + loc)
                zout.writestr(info, data)
    shutil.copy(os.path.join(out, src_case, 'expected.safetensors'),
                os.path.join(out, case, 'expected.safetensors'))


os.makedirs(out, exist_ok=True)
samples = make_samples(6, 1)
v2_dump('slime_v2', samples)
v2_dump('slime_v2_join', make_samples(5, 2), with_rollout_lp=False)
# torch.save(pickle_protocol=4/5): FRAME, SHORT_BINUNICODE, MEMOIZE, STACK_GLOBAL opcodes
v2_dump('slime_v2_p4', make_samples(4, 10), protocol=4)
v2_dump('slime_v2_p5', make_samples(4, 11), protocol=5)
v1_dump('slime_v1_cp1', make_samples(6, 3), dp=2, cp=1)
v1_dump('slime_v1_cp2', make_samples(6, 4), dp=2, cp=2)
v1_dump('slime_v1_cp4', make_samples(4, 5), dp=1, cp=4)
cuda_copy('slime_v1_cp2', 'slime_v1_cp2_cuda')
v1_dump('slime_v1_cp2_join', make_samples(6, 9), dp=2, cp=2, rollout_side=True)
v1_dump('slime_v1_tp2_cp2_pp2', make_samples(4, 8), dp=1, cp=2, tp=2, pp=2)
v1_dump('slime_v1_cp2_missing', make_samples(6, 4), dp=2, cp=2, drop_rank=3)
v1_dump('miles_cp2', make_samples(4, 6), dp=1, cp=2, miles=True)
v1_dump('miles_bshd_cp2', make_samples(4, 7), dp=1, cp=2, miles=True, bshd_len=40)
hostile()
