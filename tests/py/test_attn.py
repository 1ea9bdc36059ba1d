#!/usr/bin/env python3
"""Cross-checks `maskkit attn` against an independent numpy computation in
double precision: softmax, dnas (columns normalised over i first, then rows),
hnas:u and sinkhorn:K, each restricted to the mask, for every kernel, .npy
and HDF5 files, shapes [n, d], [h, n, d] and [b, h, n, d], float32 and
float64, masks with empty rows (zero output rows), to 1e-5; --weights-out
(pi) too; outputs large enough to be written while they are computed."""
import json
import os
import subprocess
import sys
import tempfile
import zlib

import h5py
import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]
TOL = 1e-5


def run(*args):
    r = subprocess.run([MASKKIT, "attn", *args, "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit attn {' '.join(args)} exited {r.returncode}: "
                 f"{r.stderr.strip()}")
    return json.loads(r.stdout)


# ---- the reference ---------------------------------------------------------------

def lse(x, axis):
    """log-sum-exp along axis; -inf where every entry is -inf."""
    mx = np.max(x, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - safe), axis=axis, keepdims=True)) + safe


def restrict(m, x):
    return np.where(m, x, -np.inf)


def scaled(s, m, f, g):
    with np.errstate(invalid="ignore"):
        return np.where(m, np.exp(s - f - g), 0.0)


def pi_softmax(s, m):
    return scaled(s, m, lse(restrict(m, s), -1), 0.0)


def pi_sinkhorn(s, m, rounds):
    f = np.zeros(s.shape[:-1] + (1,))
    for _ in range(rounds):
        with np.errstate(invalid="ignore"):
            g = lse(restrict(m, s - f), -2)
            f = lse(restrict(m, s - g), -1)
    return scaled(s, m, f, g)


def reference_pi(q, k, m, norm):
    """pi for q, k of shape [..., n, d] and a boolean mask [n, n]."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if norm == "softmax":
        return pi_softmax(s, m)
    if norm == "dnas":
        # columns over i first, then rows renormalised
        g = lse(restrict(m, s), -2)
        return scaled(s, m, lse(restrict(m, s - g), -1), g)
    if norm.startswith("hnas:"):
        u = float(norm[5:])
        return u * reference_pi(q, k, m, "dnas") + (1 - u) * pi_softmax(s, m)
    if norm.startswith("sinkhorn:"):
        return pi_sinkhorn(s, m, int(norm[9:]))
    raise ValueError(norm)


# ---- files -----------------------------------------------------------------------

def save(path, x):
    if path.endswith(".npy"):
        np.save(path, x)
    else:
        with h5py.File(path, "w") as f:
            f["data/x"] = x


def load(path, dataset):
    if path.endswith(".npy"):
        return np.load(path)
    with h5py.File(path, "r") as f:
        return f[dataset][...]


def close(got, want, what):
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    check(got.shape == want.shape and err <= TOL,
          f"{what}: shape {got.shape} vs {want.shape}, max error {err:.3g}")


MASKS = {}


def make_masks(tmp, n):
    rng = np.random.default_rng(7)
    rand = rng.random((n, n)) < 0.3
    rand[[0, 5, n - 1], :] = False  # empty rows
    rand[:, 3] = False              # and an empty column
    path = os.path.join(tmp, "rand.npy")
    np.save(path, rand)
    i = np.arange(n)
    MASKS["rand"] = (path, rand)
    MASKS["local2"] = ("local2", np.abs(i[:, None] - i[None, :]) <= 2)
    MASKS["full"] = (None, np.ones((n, n), bool))


def check_case(tmp, shape, dtype, ext, kernel, norm, mask, weights):
    rng = np.random.default_rng(zlib.crc32(repr((shape, kernel, norm, mask)).encode()))
    qkv = [rng.standard_normal(shape).astype(dtype) for _ in range(3)]
    names = [os.path.join(tmp, f"{c}{ext}") for c in "qkv"]
    for path, x in zip(names, qkv):
        save(path, x)
    out = os.path.join(tmp, f"o{ext}")
    wout = os.path.join(tmp, f"w{ext}")
    mpath, m = MASKS[mask]
    args = [*names, "-o", out, "--kernel", kernel, "--norm", norm, "--tile", "16"]
    if mpath:
        args += ["--mask", mpath]
    if weights:
        args += ["--weights-out", wout]
    got = run(*args)
    what = f"{kernel} {norm} mask {mask} {shape} {np.dtype(dtype).name} {ext}"
    q, k, v = (x.astype(np.float64) for x in qkv)
    pi = reference_pi(q, k, m, norm)
    o = load(out, "O")
    check(o.dtype == dtype, what + f": O dtype {o.dtype}")
    close(o, pi @ v, what + ": O")
    empty = int((~m.any(axis=1)).sum())
    check(got["empty_rows"] == empty, what + f": empty rows {got['empty_rows']} vs {empty}")
    check(got["shape"] == list(shape) and got["kernel"] == kernel, what + ": summary")
    if empty:
        check(not np.any(o[..., ~m.any(axis=1), :]), what + ": empty rows are zero")
    if weights:
        close(load(wout, "pi"), pi, what + ": pi")


def check_all(tmp):
    n, d = 37, 8
    make_masks(tmp, n)
    shapes = [(n, d), (3, n, d), (2, 2, n, d)]
    norms = ["softmax", "dnas", "hnas:0.3", "sinkhorn:4"]
    for kernel in ("dense", "masked", "block", "csr"):
        masks = ["full"] if kernel == "dense" else ["rand", "local2", "full"]
        for norm in norms:
            for mask in masks:
                for s, shape in enumerate(shapes):
                    ext = ".npy" if s % 2 == 0 else ".h5"
                    dtype = np.float64 if (s + len(norm)) % 2 else np.float32
                    weights = s == 2 or mask == "rand"
                    check_case(tmp, shape, dtype, ext, kernel, norm, mask, weights)


def check_datasets_and_layouts(tmp):
    """FILE.h5:/dataset in and out, a Fortran-order .npy, mixed formats."""
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 20, 5)) for _ in range(3))
    h5 = os.path.join(tmp, "many.h5")
    with h5py.File(h5, "w") as f:
        f["in/Q"] = q
        f["in/K"] = k.astype(np.float32)
        f["other"] = np.ones((4,))
    np.save(os.path.join(tmp, "vf.npy"), np.asfortranarray(v))
    out = os.path.join(tmp, "res.h5")
    run(h5 + ":/in/Q", h5 + ":/in/K", os.path.join(tmp, "vf.npy"), "-o", out + ":/a/b/O",
        "--mask", "local3", "--norm", "dnas")
    i = np.arange(20)
    m = np.abs(i[:, None] - i[None, :]) <= 3
    pi = reference_pi(q, k.astype(np.float32).astype(np.float64), m, "dnas")
    o = load(out, "a/b/O")
    check(o.dtype == np.float64, "mixed dtypes give float64")
    close(o, pi @ v, "datasets, Fortran order")


def check_large_output(tmp):
    """O of 4 MiB or more is written a run of slices at a time while the next
    is computed (attn_files.c): 9 slices of 512 KiB go in runs of two, the
    last alone; float64 output, HDF5 (written at the end) and a mask too."""
    shape = (3, 3, 1024, 128)
    MASKS["local64"] = ("local64", np.abs(np.arange(1024)[:, None] -
                                          np.arange(1024)[None, :]) <= 64)
    MASKS["full"] = (None, np.ones((1024, 1024), bool))
    check_case(tmp, shape, np.float32, ".npy", "dense", "softmax", "full", False)
    check_case(tmp, shape, np.float64, ".npy", "block", "dnas", "local64", False)
    check_case(tmp, shape, np.float32, ".h5", "masked", "softmax", "local64", False)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_all(tmp)
        check_datasets_and_layouts(tmp)
        check_large_output(tmp)
    return checks.summary("attn cross-check")


if __name__ == "__main__":
    sys.exit(main())
