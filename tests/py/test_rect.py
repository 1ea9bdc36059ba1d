#!/usr/bin/env python3
"""Rectangular masks (q_len x kv_len) against numpy: each mask is built here
from its definition with the queries at key positions i + kv_len - q_len
(bottom-right alignment, a KV cache, the default) or i (--align top-left) and
compared with `maskkit gen --q-len --kv-len [--align] -o m.npy`, cell by cell;
`measure --json` gives the same count and names the alignment; every pattern
(random and block= included) in both alignments is the matching corner of its
square mask on max(q_len, kv_len) positions; and `attn` with K and V longer
(or shorter) than Q matches numpy's attention in both alignments."""
import json
import os
import sys
import tempfile

import numpy as np

import checks
from checks import check, run


ALIGNS = ("bottom-right", "top-left")


def reference(name, q, kv, align="bottom-right"):
    # every pattern lives on max(q, kv) positions; the mask is its bottom-right
    # (or top-left) q x kv corner: query i at position qa, key j at position kb
    grid = max(q, kv)
    shift = align == "bottom-right"
    qa = np.arange(q)[:, None] + (grid - q) * shift
    kb = np.arange(kv)[None, :] + (grid - kv) * shift
    doc = np.full(grid, -1)  # document(lengths=2,3,4), then padding
    doc[:9] = np.repeat(np.arange(3), [2, 3, 4])[:grid] if grid >= 9 else -1
    return {
        "causal": kb <= qa,
        "local3": np.abs(qa - kb) <= 3,
        "strided4": (np.abs(qa - kb) < 4) | (np.abs(qa - kb) % 4 == 0),
        "diagonal(offsets=0,5)": np.isin(np.abs(qa - kb), [0, 5]),
        "global2": (qa < 2) | (kb < 2),
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
    """attn with q_len != kv_len: every kernel and normalisation against numpy,
    in both alignments (top-left on the causal masks, where they differ)."""
    rng = np.random.default_rng(7)
    for q_len, kv_len in [(1, 130), (5, 70), (70, 5), (64, 200), (33, 33)]:
        files = {}
        for name, rows in (("q", q_len), ("k", kv_len), ("v", kv_len)):
            files[name] = os.path.join(tmp, f"{name}.npy")
            np.save(files[name], rng.standard_normal((2, rows, 16)).astype(np.float32))
        q, k, v = (np.load(files[x]).astype(np.float64) for x in "qkv")
        for expr, align in (("causal", "bottom-right"), ("causal&local9", "bottom-right"),
                            ("prefix3+local2", "bottom-right"), ("causal", "top-left"),
                            ("prefix3+local2", "top-left")):
            mask = reference(expr, q_len, kv_len, align)
            for norm in ("softmax", "dnas"):
                want = numpy_attention(q, k, v, mask, norm)
                for kernel in ("masked", "block", "csr"):
                    out = os.path.join(tmp, "o.npy")
                    m = json.loads(run("attn", files["q"], files["k"], files["v"], "--mask",
                                       expr, "--kernel", kernel, "--norm", norm, "--tile", "16",
                                       "--backend", "cpu", "--align", align, "-o", out,
                                       "--json"))
                    err = np.abs(np.load(out) - want).max()
                    check(err < 1e-4 and m["kv_len"] == kv_len,
                          f"attn {expr} {align} {norm} {kernel} {q_len}x{kv_len}: "
                          f"error {err:.2e}")
        out = os.path.join(tmp, "o.npy")
        run("attn", files["q"], files["k"], files["v"], "--backend", "cpu", "-o", out)
        err = np.abs(np.load(out) - numpy_attention(q, k, v, True, "softmax")).max()
        check(err < 1e-4, f"attn dense {q_len}x{kv_len}: error {err:.2e}")


def corner(square, q, kv, align):
    """The q x kv corner of a square mask named by align."""
    g = square.shape[0]
    return square[g - q:, g - kv:] if align == "bottom-right" else square[:q, :kv]


def test_corners(tmp):
    """Every pattern (random terms and block= too), in both alignments, is the
    matching corner of its square mask on max(q, kv) positions, as gen writes
    it: the rule holds beyond the patterns written out in reference()."""
    names = [p["name"] if p["name"] != "document" else "document(lengths=5,6,2)"
             for p in json.loads(run("patterns", "--json"))]
    exprs = names + ["random2(seed=3)", "bigbird(w=1,r=2,g=2,block=4)", "local1(block=4)",
                     "(local3+global1)&causal", "~causal", "prefix2-local1"]
    sq, rect = os.path.join(tmp, "sq.npy"), os.path.join(tmp, "r.npy")
    for q, kv in [(3, 17), (17, 3), (1, 40), (40, 1), (12, 30)]:
        for expr in exprs:
            run("gen", expr, "--n", str(max(q, kv)), "--seed", "5", "-o", sq)
            square = np.load(sq)
            for align in ALIGNS:
                run("gen", expr, "--q-len", str(q), "--kv-len", str(kv), "--seed", "5",
                    "--align", align, "-o", rect)
                got = np.load(rect)
                check(np.array_equal(got, corner(square, q, kv, align)),
                      f"{expr} {q}x{kv} {align}: not the {align} corner of the square mask")


def main():
    names = ["causal", "local3", "prefix4", "causal&local2", "document(lengths=2,3,4)",
             "strided4", "diagonal(offsets=0,5)", "global2"]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.npy")
        for q, kv in [(1, 1), (1, 9), (3, 9), (9, 3), (9, 9), (64, 65), (65, 64), (7, 130),
                      (130, 7), (1, 200)]:
            for name in names:
                if name.startswith("document") and max(q, kv) < 9:
                    continue
                for align in ALIGNS:
                    what = f"{name} {q}x{kv} {align}"
                    run("gen", name, "--q-len", str(q), "--kv-len", str(kv), "--align", align,
                        "-o", path)
                    got = np.load(path)
                    want = reference(name, q, kv, align)
                    check(got.shape == (q, kv), f"{what}: shape {got.shape}")
                    check(got.shape == want.shape and np.array_equal(got, want),
                          f"{what}: cells differ")
                    m = json.loads(run("measure", path, "--json", "--align", align))
                    check(m["count"] == int(want.sum()) and m["kv_len"] == kv and m["n"] == q,
                          f"{what}: measure {m['count']} vs {int(want.sum())}")
                    check(m.get("align") == (align if q != kv else None),
                          f"{what}: measure says align {m.get('align')}")
                    if name == "causal":  # each query's own key: the diagonal and causal test
                        own = np.arange(q) + (kv - q) * (align == "bottom-right")
                        diag = int(sum(want[i, j] for i, j in enumerate(own) if 0 <= j < kv))
                        check(m["causal"] and m["diagonal"] == diag,
                              f"{what}: measure causal {m['causal']}, diagonal "
                              f"{m['diagonal']} vs {diag}")
        test_corners(tmp)
        test_attn(tmp)
    return checks.summary("rect")


if __name__ == "__main__":
    sys.exit(main())
