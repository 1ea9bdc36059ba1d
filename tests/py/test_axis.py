#!/usr/bin/env python3
"""Cross-checks `maskkit axis` against an independent numpy computation:
random row/column indicators (uint8, bool, int32 with negative values,
float16/32 probabilities, ranks 2 to 4, padding beyond each length set at
random) written with h5py, the dense axis mask of every block built with
np.logical_or and a band |i - j| <= w, and Eq. 9 averaged per layer, head
and sample, to 1e-12; the masks written with -o compared cell by cell."""
import csv
import io
import os
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check, close

MASKKIT = os.environ["MASKKIT"]


def run(*args):
    return checks.run("axis", *args)


def run_json(*args):
    return checks.run_json("axis", *args)


def dense_mask(r, c, w):
    """B = r_i + c_j - r_i c_j, OR-ed with the band |i - j| <= w (w None: none)."""
    b = np.logical_or(r[:, None], c[None, :])
    if w is not None:
        i = np.arange(len(r))
        b = np.logical_or(b, np.abs(i[:, None] - i[None, :]) <= w)
    return b


def reference(rows, cols, lengths, w):
    """Per block (sample, layer, head): the three sparsities and the counts,
    with rows/cols of shape [samples, layers, heads, N] as booleans."""
    s_, l_, h_, _ = rows.shape
    out = np.zeros((s_, l_, h_, 6))
    for s in range(s_):
        n = lengths[s]
        for l in range(l_):
            for h in range(h_):
                r, c = rows[s, l, h, :n], cols[s, l, h, :n]
                area = float(n * n)
                full = dense_mask(r, c, w).sum()
                axis = dense_mask(r, c, None).sum()
                local = dense_mask(np.zeros(n, bool), np.zeros(n, bool), w).sum() if w is not None else 0
                out[s, l, h] = (1 - full / area, 1 - axis / area, 1 - local / area,
                                r.sum(), c.sum(), n)
    return out


def group(blocks):
    """Means of the sparsities, percentages of the counts, over blocks [k, 6]."""
    blocks = blocks.reshape(-1, 6)
    tokens = blocks[:, 5].sum()
    return {"rho": blocks[:, 0].mean(), "rho_axis": blocks[:, 1].mean(),
            "rho_local": blocks[:, 2].mean(), "rows_pct": 100 * blocks[:, 3].sum() / tokens,
            "cols_pct": 100 * blocks[:, 4].sum() / tokens}


def same(got, want, what, tol=1e-12):
    for k, v in want.items():
        check(close(got[k], v, tol), f"{what}: {k} {got[k]!r} vs {v!r}")


def compare(got, ref, what, by=None):
    same(got, group(ref), what + " overall")
    for l in range(ref.shape[1]):
        same(got["by_layer"][l], group(ref[:, l]), what + f" layer {l}")
    if by == "head":
        for l in range(ref.shape[1]):
            for h in range(ref.shape[2]):
                g = got["by_head"][l * ref.shape[2] + h]
                check(g["layer"] == l and g["head"] == h, what + " head labels")
                same(g, group(ref[:, l, h]), what + f" layer {l} head {h}")
    if by == "sample":
        for s in range(ref.shape[0]):
            same(got["by_sample"][s], group(ref[s]), what + f" sample {s}")


def as4(a, rank):
    """[samples, layers, heads, N] view of an indicator array of rank 2..4."""
    if rank == 2:
        return a[:, None, None, :]
    if rank == 3:
        return a[:, :, None, :]
    return a


def check_dtypes(tmp):
    rng = np.random.default_rng(11)
    cases = (("uint8", 3, 7, 3, 1, 40, 0.25), ("bool", 4, 5, 2, 3, 33, 0.2),
             ("int32", 2, 9, 1, 1, 70, 0.15), ("float32", 4, 6, 2, 2, 24, None),
             ("float16", 3, 4, 3, 1, 65, None), ("float64", 2, 3, 1, 1, 129, None))
    for dtype, rank, samples, layers, heads, n, p in cases:
        shape = (samples, layers, heads, n)[:1] + ((layers,) if rank >= 3 else ()) + \
            ((heads,) if rank == 4 else ()) + (n,)
        lengths = rng.integers(2, n + 1, samples)
        lengths[0] = n
        if p is None:
            rows = rng.random(shape).astype(dtype)
            cols = (rng.random(shape) ** 3).astype(dtype)
            rb, cb = as4(rows >= 0.5, rank), as4(cols >= 0.5, rank)
        else:
            rb, cb = rng.random(shape) < p, rng.random(shape) < p
            if dtype == "int32":  # any nonzero counts, negative ones too
                rows = np.where(rb, rng.choice([-7, -1, 3, 100000], shape), 0).astype(np.int32)
                cols = np.where(cb, rng.choice([-2, 1, 65536], shape), 0).astype(np.int32)
            else:
                rows, cols = rb.astype(dtype), cb.astype(dtype)
            rb, cb = as4(rb, rank), as4(cb, rank)
        path = os.path.join(tmp, f"ind_{dtype}.h5")
        with h5py.File(path, "w") as f:
            f["rows"], f["cols"], f["lengths"] = rows, cols, lengths
        for w, local in ((2, "local2"), (None, "none"), (1, "local1")):
            ref = reference(rb, cb, lengths, w)
            what = f"{dtype} rank {rank} --with {local}"
            got = run_json(path, "--with", local, "--by", "head")
            check(got["samples"] == samples and got["layers"] == layers and
                  got["heads"] == heads and got["n"] == n, what + ": shape")
            check(got["dtype"] == dtype, what + f": dtype {got['dtype']}")
            compare(got, ref, what, "head")
            compare(run_json(path, "--with", local, "--by", "sample"), ref, what, "sample")


def check_threshold_and_names(tmp):
    rng = np.random.default_rng(12)
    samples, layers, n = 6, 3, 30
    rows = rng.random((samples, layers, n))
    cols = rng.random((samples, layers, n))
    lengths = rng.integers(1, n + 1, samples)
    path = os.path.join(tmp, "named.h5")
    with h5py.File(path, "w") as f:
        f["importance/row"], f["importance/col"] = rows, cols
        f["meta/len"] = lengths
        f["lengths"] = np.full(samples, n)  # not used: --lengths names another
    for t in (0.5, 0.3, 0.9):
        ref = reference(as4(rows >= t, 3), as4(cols >= t, 3), lengths, 2)
        got = run_json(path, "--rows", "importance/row", "--cols", "/importance/col",
                       "--lengths", "meta/len", "--threshold", str(t), "--by", "sample")
        check(got["rows_dataset"] == "/importance/row" and
              got["lengths_from"] == "/meta/len", "names: datasets reported")
        compare(got, ref, f"threshold {t}", "sample")
    # lengths from another file, and 'none' (every sample N long)
    np.save(os.path.join(tmp, "len.npy"), lengths.astype(np.int64))
    ref = reference(as4(rows >= 0.5, 3), as4(cols >= 0.5, 3), lengths, 2)
    compare(run_json(path, "--rows", "importance/row", "--cols", "importance/col",
                     "--lengths-file", os.path.join(tmp, "len.npy")), ref, "--lengths-file")
    ref = reference(as4(rows >= 0.5, 3), as4(cols >= 0.5, 3), np.full(samples, n), 2)
    compare(run_json(path, "--rows", "importance/row", "--cols", "importance/col",
                     "--lengths", "none"), ref, "--lengths none")


def check_csv(tmp):
    rng = np.random.default_rng(13)
    rows = rng.random((5, 2, 2, 20)) < 0.3
    cols = rng.random((5, 2, 2, 20)) < 0.3
    lengths = rng.integers(3, 21, 5)
    path = os.path.join(tmp, "csv.h5")
    with h5py.File(path, "w") as f:
        f["rows"], f["cols"], f["lengths"] = rows, cols, lengths
    ref = reference(rows, cols, lengths, 2)
    table = list(csv.DictReader(io.StringIO(run(path, "--csv", "-", "--by", "head"))))
    check(len(table) == 4, "csv: one line per head")
    for line in table:
        l, h = int(line["layer"]), int(line["head"])
        same({k: float(v) for k, v in line.items()}, group(ref[:, l, h]), f"csv {l},{h}", 1e-8)


def check_write(tmp):
    rng = np.random.default_rng(14)
    samples, layers, heads, n = 4, 2, 3, 50
    rows = rng.random((samples, layers, heads, n)) < 0.1
    cols = rng.random((samples, layers, heads, n)) < 0.1
    lengths = np.array([50, 17, 33, 2])
    path = os.path.join(tmp, "write.h5")
    with h5py.File(path, "w") as f:
        f["rows"], f["cols"], f["lengths"] = rows.astype(np.uint8), cols.astype(np.uint8), lengths
    for k in range(samples):
        out = os.path.join(tmp, f"masks{k}.h5")
        run(path, "-o", out, "--sample", str(k))
        m = lengths[k]
        with h5py.File(out, "r") as f:
            got = f["mask"][()]
        check(got.shape == (layers, heads, m, m), f"-o sample {k}: shape {got.shape}")
        want = np.array([[dense_mask(rows[k, l, h, :m], cols[k, l, h, :m], 2)
                          for h in range(heads)] for l in range(layers)])
        check(got.shape == want.shape and (got == want).all(), f"-o sample {k}: cells")
    # rank 3: [layers, 1, len, len], so that measure reads layers as layers
    with h5py.File(path, "w") as f:
        f["rows"], f["cols"] = rows[:, :, 0], cols[:, :, 0]
    out = os.path.join(tmp, "masks_r3.h5")
    run(path, "-o", out, "--sample", "1", "--with", "none")
    with h5py.File(out, "r") as f:
        got = f["mask"][()]
    want = np.array([[dense_mask(rows[1, l, 0], cols[1, l, 0], None)] for l in range(layers)])
    check(got.shape == want.shape and (got == want).all(), "-o rank 3, no local: cells")
    got = checks.run_json("measure", out)
    check(got["layers"] == layers and got["heads"] == 1, "measure reads the -o stack by layer")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_dtypes(tmp)
        check_threshold_and_names(tmp)
        check_csv(tmp)
        check_write(tmp)
    sys.exit(checks.summary("axis cross-check"))


if __name__ == "__main__":
    main()
