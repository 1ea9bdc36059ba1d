#!/usr/bin/env python3
"""Cross-checks `maskkit attn-stats` against an independent numpy computation:
random softmax attention over each sample's real tokens, padding filled with
junk, lengths and layouts written with h5py (float32 [S, L, H, N, N], float16
[L, H, N, N], float64 [S, H, N, N] with --axes sh), compared with --json,
--csv - and --profile-csv to 1e-9 relative; the same output for 1 and 4
threads; attention that leaks onto padding shows in mass_min."""
import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]
STATS = ("diag", "off", "first", "last", "entropy", "mass_min", "mass_max")


def run(*args, env=None):
    r = subprocess.run([MASKKIT, "attn-stats", *args], capture_output=True, text=True,
                       env=env)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit attn-stats {' '.join(args)} exited {r.returncode}: "
                 f"{r.stderr.strip()}")
    return r.stdout


def close(x, y, tol=1e-9):
    if y is None or (isinstance(y, float) and math.isnan(y)):
        return x is None
    return x is not None and abs(x - y) <= tol * abs(y) + 1e-300


def softmax_rows(rng, shape, scale):
    z = rng.standard_normal(shape) * scale
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def reference(a, lens):
    """a: float64 [S, L, H, N, N]; statistics pooled over every sample's real
    cells, one (layer, head) at a time, cell by cell in numpy."""
    s_, layers, heads, n, _ = a.shape
    out = {}
    for l in range(layers):
        for h in range(heads):
            rows = off_cells = 0
            acc = dict(diag=0.0, off=0.0, first=0.0, last=0.0, entropy=0.0)
            mass = []
            psum = np.zeros(2 * n - 1)
            pcnt = np.zeros(2 * n - 1, dtype=np.int64)
            for s in range(s_):
                m = lens[s]
                p = a[s, l, h, :m, :m]
                rows += m
                off_cells += m * (m - 1)
                acc["diag"] += np.trace(p)
                acc["off"] += p.sum() - np.trace(p)
                acc["first"] += p[:, 0].sum()
                acc["last"] += p[:, m - 1].sum()
                with np.errstate(divide="ignore", invalid="ignore"):
                    acc["entropy"] += -np.where(p > 0, p * np.log(p), 0.0).sum()
                mass.extend(p.sum(axis=1))
                for k in range(-(m - 1), m):
                    d = np.diagonal(p, k)
                    psum[k + n - 1] += d.sum()
                    pcnt[k + n - 1] += d.size
            st = {k: v / rows for k, v in acc.items()}
            st["off"] = acc["off"] / off_cells if off_cells else float("nan")
            st["mass_min"], st["mass_max"] = min(mass), max(mass)
            with np.errstate(invalid="ignore"):
                st["profile"] = np.where(pcnt > 0, psum / np.maximum(pcnt, 1), np.nan)
            st["count"] = pcnt
            out[l, h] = st
    return out


def layer_mean(ref, l, heads):
    m = {k: sum(ref[l, h][k] for h in range(heads)) / heads for k in STATS[:5]}
    m["mass_min"] = min(ref[l, h]["mass_min"] for h in range(heads))
    m["mass_max"] = max(ref[l, h]["mass_max"] for h in range(heads))
    m["profile"] = sum(ref[l, h]["profile"] for h in range(heads)) / heads
    return m


def compare_json(got, ref, n, k, what):
    layers = got["layers"]
    heads = got["heads"]
    check(got["max_offset"] == k and got["offsets"] == list(range(-k, k + 1)),
          f"{what}: offsets -{k}..{k}")
    check(got["count"] == [int(c) for c in ref[0, 0]["count"][n - 1 - k:n + k]],
          f"{what}: counts")
    sl = slice(n - 1 - k, n + k)
    for l in range(layers):
        gl = got["per_layer"][l]
        want = layer_mean(ref, l, heads)
        for key in STATS:
            check(close(gl[key], want[key]), f"{what}: layer {l} {key} {gl[key]} vs {want[key]}")
        check(all(close(x, float(y)) for x, y in zip(gl["profile"], want["profile"][sl])),
              f"{what}: layer {l} profile")
        for h in range(heads):
            gh, rh = gl["heads"][h], ref[l, h]
            check(gh["head"] == h, f"{what}: head order")
            for key in STATS:
                check(close(gh[key], rh[key]), f"{what}: ({l}, {h}) {key} {gh[key]} vs {rh[key]}")
            check(len(gh["profile"]) == 2 * k + 1 and
                  all(close(x, float(y)) for x, y in zip(gh["profile"], rh["profile"][sl])),
                  f"{what}: ({l}, {h}) profile")


def compare_csv(text, ref, what):
    rows = list(csv.DictReader(io.StringIO(text)))
    check(len(rows) == len(ref), f"{what}: {len(rows)} CSV rows for {len(ref)} heads")
    for r in rows:
        rh = ref[int(r["layer"]), int(r["head"])]
        for key in STATS:
            got = float(r[key]) if r[key] else None
            check(close(got, rh[key]), f"{what}: CSV ({r['layer']}, {r['head']}) {key}")


def compare_profile_csv(path, ref, n, k, heads, what):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    check([int(r["offset"]) for r in rows] == list(range(-k, k + 1)), f"{what}: CSV offsets")
    for r in rows:
        x = int(r["offset"]) + n - 1
        check(int(r["count"]) == ref[0, 0]["count"][x], f"{what}: CSV count at {r['offset']}")
        for (l, h), rh in ref.items():
            v = r[f"layer{l}_head{h}"]
            check(close(float(v) if v else None, float(rh["profile"][x])),
                  f"{what}: profile CSV ({l}, {h}) at {r['offset']}")
            w = layer_mean(ref, l, heads)["profile"][x]
            v = r[f"layer{l}"]
            check(close(float(v) if v else None, float(w)), f"{what}: profile CSV layer {l}")


def padded(rng, shape, lens, scale, leak=False):
    """[S, L, H, N, N] softmax over each sample's real keys (or over all N
    keys with leak), junk in the padded rows and keys."""
    a = rng.random(shape) * 3.0  # junk, never counted
    n = shape[-1]
    for s, m in enumerate(lens):
        if leak:
            a[s, :, :, :m, :] = softmax_rows(rng, shape[1:3] + (m, n), 2.0)
        else:
            a[s, :, :, :m, :m] = softmax_rows(rng, shape[1:3] + (m, m), 2.0)
    return a


def as_read(a):
    """float64 data as the data-set reader hands it over: rounded to float32."""
    return a.astype(np.float32).astype(np.float64)


def check_float32(tmp):
    rng = np.random.default_rng(3)
    shape, lens = (9, 3, 4, 24, 24), [24, 1, 5, 17, 24, 9, 2, 13, 20]
    a = padded(rng, shape, lens, 2.0).astype(np.float32)
    path = os.path.join(tmp, "f32.h5")
    with h5py.File(path, "w") as f:
        f["model/attentions"] = a
        f["lengths"] = np.array(lens, dtype=np.int32)
    ref = reference(a.astype(np.float64), lens)
    got = json.loads(run(path, "--json", "--dataset", "/model/attentions", "--max-offset", "23"))
    check(got["samples"] == 9 and got["layers"] == 3 and got["heads"] == 4 and got["n"] == 24,
          "float32: shape")
    check(got["rows"] == sum(lens) and got["dtype"] == "float32", "float32: rows, dtype")
    compare_json(got, ref, 24, 23, "float32")
    got = json.loads(run(path, "--json", "--dataset", "/model/attentions"))
    compare_json(got, ref, 24, 23, "float32 default K = N - 1")
    got = json.loads(run(path, "--json", "--dataset", "/model/attentions", "--max-offset", "5"))
    compare_json(got, ref, 24, 5, "float32 K = 5")
    prof = os.path.join(tmp, "prof.csv")
    compare_csv(run(path, "--csv", "-", "--dataset", "/model/attentions", "--profile-csv", prof),
                ref, "float32")
    compare_profile_csv(prof, ref, 24, 23, 4, "float32")
    env1, env4 = dict(os.environ, OMP_NUM_THREADS="1"), dict(os.environ, OMP_NUM_THREADS="4")
    j1 = run(path, "--json", "--dataset", "/model/attentions", env=env1)
    j4 = run(path, "--json", "--dataset", "/model/attentions", env=env4)
    check(j1 == j4, "float32: the same JSON for 1 and 4 threads")


def check_float16_no_lengths(tmp):
    rng = np.random.default_rng(4)
    a = softmax_rows(rng, (2, 3, 40, 40), 1.5).astype(np.float16)
    path = os.path.join(tmp, "f16.h5")
    with h5py.File(path, "w") as f:
        f["attention"] = a
    ref = reference(a.astype(np.float64)[None], [40])
    got = json.loads(run(path, "--json"))
    check(got["lengths"] is None and got["samples"] == 1 and got["dtype"] == "float16",
          "float16: one sample, no lengths")
    compare_json(got, ref, 40, 32, "float16")


def check_float64_axes(tmp):
    rng = np.random.default_rng(5)
    lens = [6, 11, 3, 11]
    a = padded(rng, (4, 1, 2, 11, 11), lens, 3.0)
    path = os.path.join(tmp, "f64.h5")
    with h5py.File(path, "w") as f:
        f["probs"] = a[:, 0]  # [samples, heads, N, N]
        f["len"] = np.array(lens, dtype=np.int64)
    ref = reference(as_read(a), lens)
    got = json.loads(run(path, "--json", "--axes", "sh", "--lengths", "len"))
    check(got["layers"] == 1 and got["heads"] == 2 and got["lengths"] == "/len",
          "float64 --axes sh: shape and lengths")
    compare_json(got, ref, 11, 10, "float64 --axes sh")


def check_leak(tmp):
    """Softmax over all N keys: the real keys hold less than 1 per row."""
    rng = np.random.default_rng(6)
    lens = [10, 4, 7]
    a = padded(rng, (3, 2, 2, 12, 12), lens, 2.0, leak=True)
    path = os.path.join(tmp, "leak.h5")
    with h5py.File(path, "w") as f:
        f["attentions"] = a
        f["lengths"] = np.array(lens)
    ref = reference(as_read(a), lens)
    got = json.loads(run(path, "--json"))
    compare_json(got, ref, 12, 11, "leaking softmax")
    check(got["per_layer"][0]["mass_min"] < 0.9, "leaking softmax: mass_min below 1")


def check_plot(tmp):
    gp = os.environ.get("GNUPLOT") or "gnuplot"
    if not shutil.which(gp):
        print("SKIP plot: gnuplot not installed")
        return
    path = os.path.join(tmp, "f32.h5")
    png = os.path.join(tmp, "profile.png")
    run(path, "--dataset", "/model/attentions", "--png", png, "--max-offset", "8")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "--png writes a PNG")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_float32(tmp)
        check_float16_no_lengths(tmp)
        check_float64_axes(tmp)
        check_leak(tmp)
        check_plot(tmp)
    sys.exit(checks.summary("attn-stats cross-check"))


if __name__ == "__main__":
    main()
