#!/usr/bin/env python3
"""Cross-checks `maskkit explain` against independent numpy code: the
attention matrix pi is formed in float64 for softmax, dnas, hnas:U and
sinkhorn:K (restricted to a mask: scores outside it are -inf), its column
sums compared with maskkit's -o output, its statistics (numpy quantiles,
explained-away counts, histogram) with --json and --csv, on Q/K read from
HDF5 (q/k, or x with PyTorch- and Keras-layout projections and biases) and
.npy files, and the Sinkhorn trace's residuals."""
import csv
import os
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check, run, run_json

MASKKIT = os.environ["MASKKIT"]


def lse(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m


def scale_rows(s):
    out = s - lse(s, 1)
    return np.where(np.isfinite(out), out, -np.inf)


def scale_cols(s):
    out = s - lse(s, 0)
    return np.where(np.isfinite(out), out, -np.inf)


def log_pi(s, norm):
    """log pi for one head's scores s (-inf off the mask)."""
    if norm == "softmax":
        return scale_rows(s)
    if norm == "dnas":
        return scale_rows(scale_cols(s))
    if norm.startswith("sinkhorn:"):
        x = s
        for _ in range(int(norm.split(":")[1])):
            x = scale_rows(scale_cols(x))
        return x
    u = float(norm.split(":")[1])
    with np.errstate(divide="ignore"):
        return np.log(u * np.exp(log_pi(s, "dnas")) + (1 - u) * np.exp(log_pi(s, "softmax")))


def log10_colsums(q, k, mask, norm):
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    with np.errstate(divide="ignore"):
        return np.log10(np.exp(log_pi(s, norm)).sum(axis=0))


def mask_of(expr, n, tmp):
    path = os.path.join(tmp, "m.npy")
    run("gen", expr, "--n", str(n), "-o", path)
    return np.load(path).astype(bool)


def compare_sums(tag, got, want, tol=2e-5):
    fin = np.isfinite(want)
    check(np.array_equal(fin, np.isfinite(got)), f"{tag}: empty columns differ")
    err = np.max(np.abs(got[fin] - want[fin])) if fin.any() else 0.0
    check(err <= tol, f"{tag}: log10 column sums differ by {err:.3g}")


def stats_of(lg, eps):
    v = np.sort(lg[np.isfinite(lg)])
    return {"keys": v.size, "empty": int(np.sum(~np.isfinite(lg))),
            "explained_away": int(np.sum(v < np.log10(eps))),
            "log10_min": v[0], "log10_q1": np.quantile(v, 0.25),
            "log10_median": np.quantile(v, 0.5), "log10_q3": np.quantile(v, 0.75),
            "log10_max": v[-1]}


def check_json(tag, js, sums, norms, eps):
    """sums: [norms, heads, S] from -o (exactly what the statistics read)."""
    for a, norm in enumerate(norms):
        entry = js["norms"][a]
        check(entry["norm"] == norm, f"{tag}: norm {a} is {entry['norm']}")
        for h in range(sums.shape[1]):
            want, got = stats_of(sums[a, h], eps), entry["heads"][h]
            for key, val in want.items():
                check(checks.close(got[key], val, 1e-6),
                      f"{tag} {norm} head {h}: {key} {got[key]} vs numpy {val}")
        allw = stats_of(sums[a].ravel(), eps)
        for key, val in allw.items():
            check(checks.close(entry["all"][key], val, 1e-6),
                  f"{tag} {norm} all: {key} {entry['all'][key]} vs numpy {val}")
        # Theorem 2: dnas and sinkhorn:K keep >= 1/S; hnas:u only u/S
        floor = 1.0 / js["S"]
        if norm.startswith("hnas:"):
            floor *= float(norm.split(":")[1])
        if norm != "softmax":
            check(entry["all"]["min_colsum"] >= floor * (1 - 1e-5),
                  f"{tag} {norm}: a column below its bound {floor}")
        if entry["all"]["min_colsum"] < (1 - 1e-3) / js["S"]:
            check(not entry["all"]["above_bound"], f"{tag} {norm}: above_bound")
    hist = js["histogram"]
    edges = hist["log10_lo"] + hist["width"] * np.arange(hist["bins"] + 1)
    for a, norm in enumerate(norms):
        v = sums[a][np.isfinite(sums[a])]
        idx = np.clip(np.floor((v - hist["log10_lo"]) / hist["width"]).astype(int), 0,
                      hist["bins"] - 1)
        counts = np.bincount(idx, minlength=hist["bins"])
        check(list(counts) == hist["counts"][norm], f"{tag} {norm}: histogram counts")
        check(edges[0] <= min(v.min(), np.log10(eps)) and edges[-1] >= v.max(),
              f"{tag} {norm}: histogram range")


def explain(tag, args, q, k, mask, norms, tmp, eps=1e-8):
    out = os.path.join(tmp, "sums.h5")
    js = run_json("explain", *args, "--norm", ",".join(norms), "--eps", str(eps), "-o", out)
    with h5py.File(out, "r") as f:
        sums = f["log10_colsum"][()]
    heads = q.shape[0]
    check(sums.shape == (len(norms), heads, q.shape[1]), f"{tag}: -o shape {sums.shape}")
    for a, norm in enumerate(norms):
        for h in range(heads):
            compare_sums(f"{tag} {norm} head {h}", sums[a, h],
                         log10_colsums(q[h], k[h], mask, norm))
    check_json(tag, js, sums, norms, eps)
    return js


def test_qk_file(tmp, rng):
    q = rng.normal(0, 3, (3, 70, 16)).astype(np.float32)
    k = rng.normal(0, 3, (3, 70, 16)).astype(np.float32)
    path = os.path.join(tmp, "qk.h5")
    with h5py.File(path, "w") as f:
        g = f.create_group("layer_2")
        g["q"], g["k"] = q, k.astype(np.float64)
    norms = ["softmax", "dnas", "hnas:0.25", "sinkhorn:3"]
    explain("q/k", [path + ":/layer_2"], q, k, None, norms, tmp)
    for expr in ("local(w=4) + global(g=1)", "causal", "bigbird(w=2,g=1,r=2)"):
        m = mask_of(expr, 70, tmp)
        explain(f"q/k {expr}", [path + ":/layer_2", "--mask", expr], q, k, m, norms, tmp,
                eps=1e-3)
    np.save(os.path.join(tmp, "q.npy"), q[0])
    np.save(os.path.join(tmp, "k.npy"), k[0])
    explain("npy", ["--q", os.path.join(tmp, "q.npy"), "--k", os.path.join(tmp, "k.npy")],
            q[:1], k[:1], None, ["softmax", "dnas"], tmp)


def test_layer(tmp, rng):
    s, dm, heads, d = 50, 24, 4, 6
    x = rng.normal(0, 1, (s, dm)).astype(np.float32)
    wq = rng.normal(0, 0.8, (heads * d, dm)).astype(np.float32)
    wk = rng.normal(0, 0.8, (heads * d, dm)).astype(np.float32)
    bq = rng.normal(0, 1, heads * d).astype(np.float32)
    bk = rng.normal(0, 1, heads * d).astype(np.float32)

    def split(y):
        return y.reshape(s, heads, d).transpose(1, 0, 2)

    q = split(x.astype(np.float64) @ wq.T + bq)
    k = split(x.astype(np.float64) @ wk.T + bk)
    for layout in ("torch", "tf"):
        path = os.path.join(tmp, f"layer_{layout}.h5")
        with h5py.File(path, "w") as f:
            f["x"] = x
            f["wq"] = wq if layout == "torch" else wq.T
            f["wk"] = wk if layout == "torch" else wk.T
            f["bq"], f["bk"] = bq, bk
        explain(f"layer {layout}", [path, "--heads", str(heads), "--linear", layout], q, k,
                None, ["softmax", "dnas"], tmp)


def test_csv_and_trace(tmp):
    path = os.path.join(tmp, "stats.csv")
    hist = os.path.join(tmp, "hist.csv")
    js = run_json("explain", "--random", "96,8,3", "--heads", "2", "--seed", "5",
                  "--sinkhorn-trace", "6", "--csv", path, "--hist-csv", hist)
    with open(path) as f:
        rows = list(csv.DictReader(f))
    check(len(rows) == 2 * 3, f"csv: {len(rows)} rows")
    for row in rows:
        a = 0 if row["norm"] == "softmax" else 1
        want = js["norms"][a]["all" if row["head"] == "all" else "heads"]
        if row["head"] != "all":
            want = want[int(row["head"])]
        check(int(row["explained_away"]) == want["explained_away"] and
              checks.close(float(row["log10_median"]), want["log10_median"], 1e-12),
              f"csv row {row['norm']} {row['head']}")
    with open(hist) as f:
        hrows = list(csv.DictReader(f))
    check([int(r["softmax"]) for r in hrows] == js["histogram"]["counts"]["softmax"],
          "hist csv counts")
    # the trace's shape and trend (test_trace_numpy compares its values)
    tr = js["sinkhorn_trace"]
    check(len(tr) == 2 and len(tr[0]) == 6, "trace shape")
    for h in range(2):
        cols = [r["col_max"] for r in tr[h]]
        check(cols[-1] < cols[0], f"trace head {h}: column residual does not fall: {cols}")


def test_trace_numpy(tmp, rng):
    q = rng.normal(0, 2, (1, 40, 8)).astype(np.float32)
    k = rng.normal(0, 2, (1, 40, 8)).astype(np.float32)
    path = os.path.join(tmp, "qk1.h5")
    with h5py.File(path, "w") as f:
        f["q"], f["k"] = q, k
    js = run_json("explain", path, "--sinkhorn-trace", "5")
    s = q[0].astype(np.float64) @ k[0].astype(np.float64).T / np.sqrt(8)
    x = s
    for r, got in enumerate(js["sinkhorn_trace"][0]):
        x = scale_cols(x)
        row = np.abs(np.exp(x).sum(axis=1) - 1)
        x = scale_rows(x)
        col = np.abs(np.exp(x).sum(axis=0) - 1)
        for key, val in (("row_max", row.max()), ("row_mean", row.mean()),
                         ("col_max", col.max()), ("col_mean", col.mean())):
            check(abs(got[key] - val) <= 1e-5 * max(1.0, val),
                  f"trace round {r + 1} {key}: {got[key]} vs numpy {val}")


def test_large_scores(tmp):
    """Scores in the thousands: float32 rounding must not make dnas look
    below 1/S (Theorem 2 holds in reals; the check allows for the rounding)."""
    n, big = 64, 3000.0
    q = np.zeros((n, 2), np.float32)
    q[0, 0] = big * np.sqrt(2)
    q[1:, 1] = big / np.sqrt(2)
    k = np.zeros((n, 2), np.float32)
    k[:, 0] = 1
    k[0, 1] = 1
    np.save(os.path.join(tmp, "bq.npy"), q)
    np.save(os.path.join(tmp, "bk.npy"), k)
    js = run_json("explain", "--q", os.path.join(tmp, "bq.npy"), "--k",
                  os.path.join(tmp, "bk.npy"))
    check(js["norms"][1]["all"]["above_bound"], "large scores: dnas reported below 1/S")
    check(js["norms"][1]["all"]["min_colsum"] >= (1 - 1e-2) / n, "large scores: dnas far below")


def main():
    rng = np.random.default_rng(20201)
    with tempfile.TemporaryDirectory() as tmp:
        test_qk_file(tmp, rng)
        test_layer(tmp, rng)
        test_csv_and_trace(tmp)
        test_trace_numpy(tmp, rng)
        test_large_scores(tmp)
    return checks.summary("test_explain")


if __name__ == "__main__":
    sys.exit(main())
