#!/usr/bin/env python3
"""maskkit's FlexAttention layouts (--format flex, .npz) against an
independent numpy model of BlockMask's rules, without torch.

For each mask M (from `maskkit gen --format npy`) and its layout:
  * the kernel's mask -- full blocks all ones, partial blocks M's cells, the
    rest zero, on the grid padded to whole blocks and cut back to n -- is M;
  * the partial and full blocks are exactly numpy's: a block is non-empty
    when a cell of it is set and full when every cell of the padded block
    is (so a block cut by the end of the sequence is never full), and
    partial blocks are the non-empty ones that are not full;
  * each row of kv_indices lists its blocks ascending, then the others
    ascending (create_block_mask's order); shapes, dtypes and sizes;
  * per head (--heads-file: head k is gen EXPR_k --seed k), and for
    rectangular masks (--q-len != --kv-len: nb_q x nb_kv blocks);
  * the layout read back (also as numpy re-saves it, stored and deflated)
    is M with each non-empty block filled."""
import os
import subprocess
import sys
import tempfile

import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]


def gen(*args):
    subprocess.run([MASKKIT, "gen", *args], check=True, capture_output=True)


def blocks_of(m, b):
    """any / all over each b x b block of m padded with zeros to whole blocks."""
    nq, nk = m.shape
    bq, bk = -(-nq // b), -(-nk // b)
    pad = np.zeros((bq * b, bk * b), bool)
    pad[:nq, :nk] = m
    tiles = pad.reshape(bq, b, bk, b)
    return tiles.any(axis=(1, 3)), tiles.all(axis=(1, 3))


def kernel_mask(m, num, idx, full_num, full_idx, b):
    """What a FlexAttention kernel computes from the layout and mask_mod = m."""
    nq, nk = m.shape
    bq, bk = num.shape[0], -(-nk // b)
    pad = np.zeros((bq * b, bk * b), bool)
    pad[:nq, :nk] = m
    out = np.zeros_like(pad)
    for qb in range(bq):
        rows = slice(qb * b, (qb + 1) * b)
        for kb in idx[qb, :num[qb]]:
            cols = slice(kb * b, (kb + 1) * b)
            out[rows, cols] = pad[rows, cols]
        for kb in full_idx[qb, :full_num[qb]]:
            out[rows, kb * b:(kb + 1) * b] = True
    return out[:nq, :nk]


def expected_rows(sel):
    """Each row of a block matrix: its set blocks ascending, then the rest."""
    return np.array([np.concatenate([np.flatnonzero(r), np.flatnonzero(~r)]) for r in sel])


def check_head(what, m, d, h, b):
    nq, nk = m.shape
    num, idx = d["kv_num_blocks"][0, h], d["kv_indices"][0, h]
    full_num, full_idx = d["full_kv_num_blocks"][0, h], d["full_kv_indices"][0, h]
    any_, all_ = blocks_of(m, b)
    partial = any_ & ~all_
    check((kernel_mask(m, num, idx, full_num, full_idx, b) == m).all(),
          f"{what}: the kernel's mask differs from the dense mask")
    check((num == partial.sum(axis=1)).all(), f"{what}: kv_num_blocks {num}")
    check((full_num == all_.sum(axis=1)).all(), f"{what}: full_kv_num_blocks {full_num}")
    check((idx == expected_rows(partial)).all(), f"{what}: kv_indices rows")
    check((full_idx == expected_rows(all_)).all(), f"{what}: full_kv_indices rows")
    for qb in range(num.shape[0]):
        for kb in full_idx[qb, :full_num[qb]]:
            cells = m[qb * b:(qb + 1) * b, kb * b:(kb + 1) * b]
            check(cells.shape == (b, b) and cells.all(),
                  f"{what}: full block ({qb}, {kb}) is not full")
    check(int(d["q_len"]) == nq and int(d["kv_len"]) == nk, f"{what}: q_len/kv_len")


def check_file(what, d, heads, n, b, kv=None):
    nb, nbk = -(-n // b), -(-(kv or n) // b)
    want = {"kv_num_blocks": (1, heads, nb), "kv_indices": (1, heads, nb, nbk),
            "full_kv_num_blocks": (1, heads, nb), "full_kv_indices": (1, heads, nb, nbk),
            "q_len": (), "kv_len": (), "block_size": (2,)}
    check(sorted(d.files) == sorted(want), f"{what}: members {d.files}")
    for name, shape in want.items():
        check(d[name].dtype == np.int32 and d[name].shape == shape,
              f"{what}: {name} is {d[name].dtype} {d[name].shape}, expected int32 {shape}")
    check(d["block_size"].tolist() == [b, b], f"{what}: block_size {d['block_size']}")


def filled(m, b):
    nq, nk = m.shape
    any_, _ = blocks_of(m, b)
    return np.kron(any_, np.ones((b, b), bool))[:nq, :nk]


def check_read_back(what, path, m, b, tmp):
    back = os.path.join(tmp, "back.npy")
    gen(path, "-o", back)
    check((np.load(back) == filled(m, b)).all(), f"{what}: read back differs")


def check_pattern(expr, n, b, tmp, kv=None, align="bottom-right"):
    """kv: a rectangular n x kv mask (queries the last n of kv positions, or
    the first n with align top-left)."""
    what = f"{expr} n={n} kv={kv or n} block={b} {align}"
    size = ["--q-len", str(n), "--kv-len", str(kv), "--align", align] if kv else ["--n", str(n)]
    dense, layout = os.path.join(tmp, "m.npy"), os.path.join(tmp, "m.npz")
    gen(expr, *size, "--seed", "3", "-o", dense)
    gen(expr, *size, "--seed", "3", "--block", str(b), "-o", layout)
    m = np.load(dense)
    check(m.shape == (n, kv or n), f"{what}: dense shape {m.shape}")
    with np.load(layout) as d:
        check_file(what, d, 1, n, b, kv)
        check_head(what, m, d, 0, b)
        arrays = {k: d[k] for k in d.files}
    check_read_back(what, layout, m, b, tmp)
    for save in (np.savez, np.savez_compressed):
        again = os.path.join(tmp, "again.npz")
        save(again, **arrays)
        check_read_back(f"{what} ({save.__name__})", again, m, b, tmp)


def check_heads(tmp):
    exprs = ["causal", "local(w=40)", "bigbird(w=2,r=1,g=1,block=16)", "none"]
    n, b = 1000, 128
    heads = os.path.join(tmp, "h.json")
    with open(heads, "w") as f:
        f.write("[" + ", ".join(f'"{e}"' for e in exprs) + "]")
    layout = os.path.join(tmp, "s.npz")
    gen("--heads-file", heads, "--n", str(n), "--block", str(b), "-o", layout)
    with np.load(layout) as d:
        check_file("heads", d, len(exprs), n, b)
        for h, expr in enumerate(exprs):
            dense = os.path.join(tmp, f"h{h}.npy")
            gen(expr, "--n", str(n), "--seed", str(h), "-o", dense)
            check_head(f"head {h} ({expr})", np.load(dense), d, h, b)


def main():
    cases = [("causal", 256, 64), ("causal", 1000, 128), ("local(w=16)", 300, 64),
             ("bigbird(w=2,r=1,g=1,block=8)", 512, 128),
             ("bigbird(w=1,r=2,g=1,block=16)", 1000, 64),
             ("local32+global1", 1000, 128), ("strided(l=8)", 200, 64), ("full", 100, 64),
             ("none", 64, 64), ("causal", 7, 3)]
    with tempfile.TemporaryDirectory() as tmp:
        for expr, n, b in cases:
            check_pattern(expr, n, b, tmp)
        # rectangular: decoding against a cache, a chunk of queries, more queries than keys
        for expr, n, kv, b in [("causal", 1, 1000, 128), ("causal&local100", 130, 1000, 64),
                               ("prefix50+local8", 300, 77, 32), ("full", 5, 9, 4)]:
            check_pattern(expr, n, b, tmp, kv)
            check_pattern(expr, n, b, tmp, kv, "top-left")
        check_heads(tmp)
    return checks.summary("flex_npz")


if __name__ == "__main__":
    sys.exit(main())
