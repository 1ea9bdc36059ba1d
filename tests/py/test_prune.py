#!/usr/bin/env python3
"""Cross-checks `maskkit prune` against independent numpy code: unstructured
pruning as a stable argsort of -P (ties to the lower flat index), DAM_s as
np.diagonal means ranked by (-score, |d|, d) with the nearest sparsity found
by trying every m, the masks read back with h5py, `maskkit measure` on the
2-D outputs, and the Gumbel sampler's statistics."""
import json
import os
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check, run, run_json

MASKKIT = os.environ["MASKKIT"]


def read_mask(path):
    with h5py.File(path, "r") as f:
        return f["mask"][()].astype(bool)


def slack(cells):
    """Counts this close are equally near the target (decimal targets are
    inexact in binary: (1 - 0.7) * 25 = 7.500000000000001 is a tie)."""
    return 1e-9 + 1e-12 * cells


def nearest_count(target, cells):
    """The integer nearest (1 - s) n^2, a half going down."""
    want = (1.0 - target) * cells
    fl = np.floor(want)
    return int(fl + 1 if want - fl > 0.5 + slack(cells) else fl)


def entry_mask(p, target):
    n = p.shape[0]
    k = nearest_count(target, n * n)
    order = np.argsort(-p.ravel(), kind="stable")
    m = np.zeros(n * n, dtype=bool)
    m[order[:k]] = True
    return m.reshape(n, n)


def diagonal_mask(p, target, border):
    """DAM_s by brute force: every m is built and counted."""
    n = p.shape[0]
    p64 = p.astype(np.float64)
    offsets = sorted(range(-(n - 1), n),
                     key=lambda d: (-np.diagonal(p64, d).mean(), abs(d), d))
    i, j = np.indices((n, n))
    edge = (i == 0) | (j == 0) | (i == n - 1) | (j == n - 1)
    m = edge.copy() if border else np.zeros((n, n), dtype=bool)
    best, best_m, best_mask = None, 0, m.copy()
    for count in range(0, 2 * n):
        if count:
            m |= (j - i) == offsets[count - 1]
        dist = abs(m.sum() - (1.0 - target) * n * n)
        if best is None or dist < best - slack(n * n):
            best, best_m, best_mask = dist, count, m.copy()
    return best_mask, best_m


def is_toeplitz(m):
    return bool((m[1:, 1:] == m[:-1, :-1]).all())


def check_entry(tmp):
    rng = np.random.default_rng(3)
    for name, p, levels in (
            ("random", rng.random((3, 37, 37)).astype(np.float32), "0.1..0.9"),
            ("ties", (np.floor(rng.random((2, 29, 29)) * 6) / 6).astype(np.float64), "0.1..0.9"),
            ("halves", rng.random((2, 5, 5)).astype(np.float32), "0.1,0.3,0.5,0.7,0.9")):
        path = os.path.join(tmp, f"p_{name}.h5")
        with h5py.File(path, "w") as f:
            f["group/importance"] = p
        out = os.path.join(tmp, f"e_{name}_{{}}.h5")
        got = run_json("prune", path + ":/group/importance", "--sparsity", levels, "-o", out)
        count = 9 if ".." in levels else levels.count(",") + 1
        check(got["mode"] == "entry" and got["heads"] == p.shape[0]
              and len(got["levels"]) == count, f"entry {name}: report")
        prev = None
        for level in got["levels"]:
            masks = read_mask(level["output"])
            n = p.shape[1]
            check(masks.shape == p.shape, f"entry {name}: shape {masks.shape}")
            for h in range(p.shape[0]):
                want = entry_mask(p[h], level["target"])
                what = f"entry {name} level {level['target']:.2f} head {h}"
                check((masks[h] == want).all(), what + ": mask differs from numpy")
                check(level["heads"][h]["kept"] == want.sum(), what + ": kept")
                check(abs(want.sum() - (1 - level["target"]) * n * n) <= 0.5 + slack(n * n),
                      what + ": not within one entry")
            if prev is not None:
                check(not (masks & ~prev).any(), f"entry {name}: levels not nested")
            prev = masks


def check_diagonal(tmp):
    rng = np.random.default_rng(4)
    for name, p in (("random", rng.random((2, 23, 23)).astype(np.float32)),
                    ("ties", (np.floor(rng.random((2, 17, 17)) * 4) / 8).astype(np.float32))):
        path = os.path.join(tmp, f"d_{name}.h5")
        with h5py.File(path, "w") as f:
            f["p"] = p
        for border in (True, False):
            out = os.path.join(tmp, f"d_{name}_{border}_{{}}.h5")
            args = ["prune", path, "--structured", "--sparsity", "0.05,0.3,0.5,0.77,0.95",
                    "-o", out]
            got = run_json(*args, *([] if border else ["--no-border"]))
            check(got["mode"] == "diagonal" and got["border"] == border, f"diagonal {name}: report")
            for level in got["levels"]:
                masks = read_mask(level["output"])
                for h in range(p.shape[0]):
                    want, m = diagonal_mask(p[h], level["target"], border)
                    g = level["heads"][h]
                    what = f"diagonal {name} border={border} level {level['target']} head {h}"
                    check((masks[h] == want).all(), what + ": mask differs from numpy")
                    check(g["diagonals"] == m, what + f": m {g['diagonals']} vs {m}")
                    check(g["toeplitz"] == is_toeplitz(want), what + ": toeplitz flag")
                    check(is_toeplitz(masks[h][1:-1, 1:-1]) and g["toeplitz_interior"],
                          what + ": interior not Toeplitz")
                    if not border:
                        check(g["toeplitz"], what + ": not Toeplitz without the border")


def check_measure(tmp):
    """A 2-D input gives a plain mask that `maskkit measure` reads."""
    rng = np.random.default_rng(5)
    p = rng.random((40, 40))
    path = os.path.join(tmp, "p2.npy")
    np.save(path, p)
    for border in (False, True):
        out = os.path.join(tmp, f"m2_{border}.h5")
        got = run_json("prune", path, "--structured", "--sparsity", "0.6", "-o", out,
                       *([] if border else ["--no-border"]))
        meas = json.loads(run("measure", out, "--json"))
        want, _ = diagonal_mask(p.astype(np.float32), 0.6, border)
        g = got["levels"][0]["heads"][0]
        check(got["rank"] == 2 and meas["n"] == 40, f"measure border={border}: n")
        check(meas["count"] == want.sum() == g["kept"], f"measure border={border}: count")
        check(abs(meas["sparsity"] - g["sparsity"]) < 1e-15, f"measure border={border}: sparsity")
        check(meas["toeplitz"] == (not border) == g["toeplitz"],
              f"measure border={border}: toeplitz {meas['toeplitz']}")


def check_gumbel(tmp):
    rng = np.random.default_rng(6)
    alpha = (rng.standard_normal((2, 64, 64)) * 2).astype(np.float32)
    path = os.path.join(tmp, "alpha.h5")
    with h5py.File(path, "w") as f:
        f["alpha"] = alpha
    outs = {}
    for key, extra in (("a", ["--seed", "5"]), ("b", ["--seed", "5", "--tau", "0.05"]),
                       ("c", ["--seed", "6"])):
        outs[key] = os.path.join(tmp, f"g_{key}.h5")
        got = run_json("prune", path, "--gumbel", *extra, "-o", outs[key])
        for h in range(2):
            g = got["levels"][0]["heads"][h]
            q = 1.0 / (1.0 + np.exp(-alpha[h].astype(np.float64)))
            exp_sparsity = 1.0 - q.mean()
            sd = np.sqrt((q * (1 - q)).sum()) / q.size
            check(abs(g["expected_sparsity"] - exp_sparsity) < 1e-9,
                  f"gumbel {key} head {h}: expected {g['expected_sparsity']} vs {exp_sparsity}")
            check(abs(g["sparsity"] - exp_sparsity) < 6 * sd,
                  f"gumbel {key} head {h}: sparsity {g['sparsity']} far from {exp_sparsity}")
    a, b, c = (read_mask(outs[k]) for k in "abc")
    check((a == b).all(), "gumbel: tau changed the thresholded mask")
    check((a != c).any(), "gumbel: another seed gave the same mask")
    check((a[0] != a[1]).any(), "gumbel: two heads drew the same noise")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_entry(tmp)
        check_diagonal(tmp)
        check_measure(tmp)
        check_gumbel(tmp)
    return checks.summary("prune")


if __name__ == "__main__":
    sys.exit(main())
