#!/usr/bin/env python3
"""Cross-checks `maskkit measure` on data sets against independent numpy
code: the AAA paper's Eq. 9 (per sample, layer and head, restricted to each
sample's N_i real tokens) for masks, thresholded and top-p attention maps in
float16/32/64 and every rank from [N, N] to [samples, layers, heads, N, N],
the classic figure at the stored N, the per-layer/head/sample breakdowns and
the CSV; patterns measured at each sample's length from .txt/.npy/.h5
lengths files against dense numpy masks."""
import csv
import io
import json
import os
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check, close, run, run_json


def top_p_keep(row, p):
    """Boolean keep of the fewest keys reaching mass p of the row (a sort)."""
    row = row.astype(np.float64)
    total = row.sum()
    keep = np.zeros(row.shape, bool)
    if total <= 0:
        return keep
    order = np.argsort(-row, kind="stable")
    csum = np.cumsum(row[order])
    k = int(np.searchsorted(csum, p * total * (1 - 1e-12)) + 1)
    keep[order[:min(k, row.size)]] = True
    return keep


def keep_cells(block, rule, value):
    if rule == "mask":
        return block != 0
    if rule == "threshold":
        return block >= np.float32(value)
    return np.array([top_p_keep(r, value) for r in block])


def eq9(data, lengths, rule, value):
    """rho per (sample, layer, head) over real tokens, and the classic one."""
    s_, l_, h_, n = data.shape[:4]
    real = np.zeros((s_, l_, h_))
    full = np.zeros((s_, l_, h_))
    for i in range(s_):
        m = lengths[i]
        for l in range(l_):
            for h in range(h_):
                b = data[i, l, h]
                real[i, l, h] = 1 - keep_cells(b[:m, :m], rule, value).sum() / m**2
                full[i, l, h] = 1 - keep_cells(b, rule, value).sum() / n**2
    return real, full


def compare(got, real, full, what):
    check(close(got["sparsity"], real.mean()), f"{what}: rho {got['sparsity']} vs {real.mean()}")
    check(close(got["sparsity_classic"], full.mean()), f"{what}: classic")
    check(np.allclose(got["by_layer"], real.mean(axis=(0, 2)), rtol=0, atol=1e-12),
          f"{what}: by layer")
    check(np.allclose([x["sparsity"] for x in got["by_head"]], real.mean(axis=0).ravel(),
                      rtol=0, atol=1e-12), f"{what}: by head")
    check(np.allclose(got["by_sample"], real.mean(axis=(1, 2)), rtol=0, atol=1e-12),
          f"{what}: by sample")


def softmax_maps(rng, s_, l_, h_, n, lengths):
    x = rng.standard_normal((s_, l_, h_, n, n)) * 2
    for i in range(s_):  # padded keys get no attention, as with a key padding mask
        x[i, :, :, :, lengths[i]:] = -np.inf
    x = np.exp(x - x.max(axis=-1, keepdims=True))
    return x / x.sum(axis=-1, keepdims=True)


def check_files(tmp):
    rng = np.random.default_rng(7)
    s_, l_, h_, n = 11, 3, 4, 24
    lengths = rng.integers(1, n + 1, s_)
    lengths[0] = n
    probs = softmax_maps(rng, s_, l_, h_, n, lengths)
    for dtype in (np.float16, np.float32, np.float64):
        p = probs.astype(dtype)
        path = os.path.join(tmp, f"att_{np.dtype(dtype).name}.h5")
        with h5py.File(path, "w") as f:
            f["run/attentions"] = p
            f["run/lengths"] = lengths.astype(np.int32)
        stored = p.astype(np.float32)
        for rule, value in (("threshold", 0.05), ("top-p", 0.9), ("top-p", 0.5)):
            real, full = eq9(stored, lengths, rule, value)
            got = run_json("measure", path, f"--{rule}", str(value),
                           "--lengths", "/run/lengths")
            compare(got, real, full, f"{np.dtype(dtype).name} {rule} {value}")
    masks = probs >= 0.04
    real, full = eq9(masks, lengths, "mask", 0)
    path = os.path.join(tmp, "masks.h5")
    with h5py.File(path, "w") as f:
        f["masks"] = masks
        f["lengths"] = lengths
    compare(run_json("measure", path), real, full, "bool masks")
    # the CSV by head holds the same numbers
    rows = list(csv.DictReader(io.StringIO(run("measure", path, "--by", "head", "--csv", "-"))))
    check(len(rows) == l_ * h_ and np.allclose([float(r["sparsity"]) for r in rows],
                                               real.mean(axis=0).ravel(), atol=1e-8),
          "csv by head")
    # leading axes absent: [heads, N, N] is one sample of one layer
    with h5py.File(path, "w") as f:
        f["mask"] = masks[0, 0].astype(np.uint8)
        f["lengths"] = lengths[:1]
    real, full = eq9(masks[:1, :1], lengths[:1], "mask", 0)
    compare(run_json("measure", path), real, full, "rank 3")
    # --axes sh: [samples, heads, N, N]
    with h5py.File(path, "w") as f:
        f["x"] = masks[:, 1].astype(np.int64)
        f["lengths"] = lengths
    real, full = eq9(masks[:, 1:2], lengths, "mask", 0)
    compare(run_json("measure", path, "--axes", "sh"), real, full, "axes sh")


def band(n, w):
    i, j = np.indices((n, n))
    return np.abs(i - j) <= w


def pattern(name, n):
    i, j = np.indices((n, n))
    if name == "local3":
        return band(n, 3)
    if name == "causal":
        return j <= i
    if name == "star":
        return band(n, 1) | (i == 0) | (j == 0)
    if name == "strided(l=4)":
        d = np.abs(i - j)
        return (d < 4) | (d % 4 == 0)
    raise ValueError(name)


def check_patterns(tmp):
    rng = np.random.default_rng(3)
    lengths = rng.integers(1, 200, 150)
    files = {"len.txt": None, "len.npy": None, "len.h5": None}
    np.savetxt(os.path.join(tmp, "len.txt"), lengths, fmt="%d")
    np.save(os.path.join(tmp, "len.npy"), lengths.astype(np.int32))
    with h5py.File(os.path.join(tmp, "len.h5"), "w") as f:
        f["lengths"] = lengths.astype(np.uint16)
    for name in ("local3", "causal", "star", "strided(l=4)"):
        per = np.array([1 - pattern(name, m).sum() / m**2 for m in lengths])
        nmax = int(lengths.max())
        classic = 1 - pattern(name, nmax).sum() / nmax**2
        for fname in files:
            got = run_json("measure", name, "--lengths", os.path.join(tmp, fname))
            what = f"{name} lengths from {fname}"
            check(close(got["sparsity"], per.mean()), f"{what}: {got['sparsity']} vs {per.mean()}")
            check(close(got["sparsity_classic"], classic), f"{what}: classic")
            check(np.allclose(got["by_sample"], per, rtol=0, atol=1e-12), f"{what}: by sample")
        got = run_json("measure", name, "--lengths", os.path.join(tmp, "len.txt"), "--n", "256")
        classic = 1 - pattern(name, 256).sum() / 256**2
        check(close(got["sparsity_classic"], classic), f"{name}: classic at --n 256")


def check_heads_file(tmp):
    """--heads-file: a pattern per (layer, head), each at each sample's length."""
    rng = np.random.default_rng(5)
    lengths = rng.integers(2, 90, 60)
    names = [["local3", "causal", "star"], ["strided(l=4)", "local3", "causal"]]
    path = os.path.join(tmp, "heads.json")
    with open(path, "w") as f:
        json.dump(names, f)
    np.savetxt(os.path.join(tmp, "hl.txt"), lengths, fmt="%d")
    per = np.array([[[1 - pattern(x, m).sum() / m**2 for x in layer] for layer in names]
                    for m in lengths])  # [samples, layers, heads]
    got = run_json("measure", "--heads-file", path, "--lengths", os.path.join(tmp, "hl.txt"),
                   "--n", "100")
    check(got["layers"] == 2 and got["heads"] == 3, "heads file: shape")
    check(close(got["sparsity"], per.mean()), f"heads file: {got['sparsity']} vs {per.mean()}")
    check(np.allclose([x["sparsity"] for x in got["by_head"]], per.mean(axis=0).ravel(),
                      rtol=0, atol=1e-12), "heads file: by head")
    check(np.allclose(got["by_sample"], per.mean(axis=(1, 2)), rtol=0, atol=1e-12),
          "heads file: by sample")
    classic = np.mean([[1 - pattern(x, 100).sum() / 100**2 for x in layer] for layer in names])
    check(close(got["sparsity_classic"], classic), "heads file: classic at --n 100")
    # the stack `gen --heads-file` writes holds each head's pattern in its place
    stack = os.path.join(tmp, "stack.h5")
    run("gen", "--heads-file", path, "--n", "40", "-o", stack)
    with h5py.File(stack, "r") as f:
        m = f["mask"][()]
    want = np.array([[pattern(x, 40) for x in layer] for layer in names])
    check(m.shape == want.shape and (m.astype(bool) == want).all(), "gen --heads-file stack")
    got = run_json("measure", stack)
    check(np.allclose([x["sparsity"] for x in got["by_head"]],
                      [1 - w.sum() / 1600 for w in want.reshape(6, 40, 40)], rtol=0, atol=1e-12),
          "measure of the stack, by head")
    # seeded heads: head k draws with seed + k in both gen and measure
    rpath = os.path.join(tmp, "random.json")
    with open(rpath, "w") as f:
        json.dump(["random2", "random2", "bigbird", "local1"], f)
    run("gen", "--heads-file", rpath, "--n", "48", "--seed", "9", "-o", stack)
    from_file = run_json("measure", stack)["by_head"]
    from_text = run_json("measure", "--heads-file", rpath, "--n", "48", "--seed", "9")["by_head"]
    check([x["sparsity"] for x in from_file] == [x["sparsity"] for x in from_text],
          "seeded heads: measure --heads-file agrees with the stack gen writes")
    with h5py.File(stack, "r") as f:
        m = f["mask"][()]
    check((m[0] != m[1]).any(), "seeded heads differ")
    # bigbird's count depends on its draw: the seeds must be the same ones
    check(from_file[2]["sparsity"] == from_text[2]["sparsity"], "bigbird head")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_files(tmp)
        check_patterns(tmp)
        check_heads_file(tmp)
    return checks.summary("test_dataset")


if __name__ == "__main__":
    sys.exit(main())
