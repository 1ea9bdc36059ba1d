#!/usr/bin/env python3
"""Rectangular masks (q_len x kv_len) against numpy: each mask is built here
from its definition with the queries at key positions i + kv_len - q_len
(bottom-right alignment, a KV cache) and compared with `maskkit gen --q-len
--kv-len -o m.npy`, cell by cell; `measure --json` gives the same count; and
`attn` with K and V longer (or shorter) than Q matches numpy's attention."""
import json
import os
import sys
import tempfile

import numpy as np

import checks
from checks import check, run


def reference(name, q, kv):
    # every pattern lives on max(q, kv) positions; the mask is its bottom-right
    # q x kv corner: query i at position qa, key j at position kb
    grid = max(q, kv)
    qa = np.arange(q)[:, None] + (grid - q)
    kb = np.arange(kv)[None, :] + (grid - kv)
    doc = np.full(grid, -1)  # document(lengths=2,3,4), then padding
    doc[:9] = np.repeat(np.arange(3), [2, 3, 4])[:grid] if grid >= 9 else -1
    return {
        "causal": kb <= qa,
        "local3": np.abs(qa - kb) <= 3,
        "prefix4": (kb < 4) | (kb <= qa),
        "causal&local2": (kb <= qa) & (qa - kb <= 2),
        "causal&local9": (kb <= qa) & (qa - kb <= 9),
        "prefix3+local2": (kb < 3) | (kb <= qa) | (np.abs(qa - kb) <= 2),
        "document(lengths=2,3,4)": (doc[qa] == doc[kb]) & (doc[kb] >= 0),
    }[name]


def numpy_attention(q, k, v, mask, norm):
    """softmax or dnas (columns first, then rows) over the mask's entries,
    in float64; rows without an entry are zero."""
    s = np.einsum("hid,hjd->hij", q, k) / np.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    if norm == "dnas":
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.log(np.exp(s).sum(1, keepdims=True))
        s = np.where(mask, s - np.where(np.isfinite(g), g, 0), -np.inf)
    top = np.max(s, -1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    p = np.exp(s - top)
    tot = p.sum(-1, keepdims=True)
    p = np.divide(p, tot, out=np.zeros_like(p), where=tot > 0)
    return p @ v


def test_attn(tmp):
    """attn with q_len != kv_len: every kernel and normalisation against numpy."""
    rng = np.random.default_rng(7)
    for q_len, kv_len in [(1, 130), (5, 70), (70, 5), (64, 200), (33, 33)]:
        files = {}
        for name, rows in (("q", q_len), ("k", kv_len), ("v", kv_len)):
            files[name] = os.path.join(tmp, f"{name}.npy")
            np.save(files[name], rng.standard_normal((2, rows, 16)).astype(np.float32))
        q, k, v = (np.load(files[x]).astype(np.float64) for x in "qkv")
        for expr in ("causal", "causal&local9", "prefix3+local2"):
            mask = reference(expr, q_len, kv_len)
            for norm in ("softmax", "dnas"):
                want = numpy_attention(q, k, v, mask, norm)
                for kernel in ("masked", "block", "csr"):
                    out = os.path.join(tmp, "o.npy")
                    m = json.loads(run("attn", files["q"], files["k"], files["v"], "--mask",
                                       expr, "--kernel", kernel, "--norm", norm, "--tile", "16",
                                       "--backend", "cpu", "-o", out, "--json"))
                    err = np.abs(np.load(out) - want).max()
                    check(err < 1e-4 and m["kv_len"] == kv_len,
                          f"attn {expr} {norm} {kernel} {q_len}x{kv_len}: error {err:.2e}")
        out = os.path.join(tmp, "o.npy")
        run("attn", files["q"], files["k"], files["v"], "--backend", "cpu", "-o", out)
        err = np.abs(np.load(out) - numpy_attention(q, k, v, True, "softmax")).max()
        check(err < 1e-4, f"attn dense {q_len}x{kv_len}: error {err:.2e}")


def main():
    names = ["causal", "local3", "prefix4", "causal&local2", "document(lengths=2,3,4)"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npy")
        for q, kv in [(1, 1), (1, 9), (3, 9), (9, 3), (9, 9), (64, 65), (65, 64), (7, 130),
                      (130, 7), (1, 200)]:
            for name in names:
                if name.startswith("document") and max(q, kv) < 9:
                    continue
                run("gen", name, "--q-len", str(q), "--kv-len", str(kv), "-o", path)
                got = np.load(path)
                want = reference(name, q, kv)
                check(got.shape == (q, kv), f"{name} {q}x{kv}: shape {got.shape}")
                check(got.shape == want.shape and np.array_equal(got, want),
                      f"{name} {q}x{kv}: cells differ")
                m = json.loads(run("measure", path, "--json"))
                check(m["count"] == int(want.sum()) and m["kv_len"] == kv and m["n"] == q,
                      f"{name} {q}x{kv}: measure {m['count']} vs {int(want.sum())}")
        test_attn(tmp)
    return checks.summary("rect")


if __name__ == "__main__":
    sys.exit(main())
