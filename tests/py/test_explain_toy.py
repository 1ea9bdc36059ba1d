#!/usr/bin/env python3
"""Cross-checks `maskkit explain --toy` against independent numpy code.

collapse: the starting points maskkit wrote (--csv, %.17g) are stepped with
numpy's own UNAS/DNAS (dot or Gaussian-kernel scores, normalised with
logaddexp), and every later step's coordinates must match to 1e-9; the
cluster counts are recounted with a numpy single linkage; the defaults must
give the paper's result (UNAS 1 cluster, DNAS 2 after 4 steps) and the
starting clouds the documented means and spread.
distance: the closed forms are recomputed from the paper's formulas, and
one-step simulations of N0 points at +a and N1 at -a are run in numpy."""
import csv
import json
import os
import sys
import tempfile

import numpy as np

import checks
from checks import check, close, run, run_json

MASKKIT = os.environ["MASKKIT"]


def scores(x, score):
    if score == "dot":
        return x @ x.T
    d = x[:, None, :] - x[None, :, :]
    return -0.5 * (d * d).sum(-1)


def step(x, dnas, score):
    """x_i <- sum_j pi_ij x_j; DNAS divides each key's column by its sum
    over the queries first (in logs)."""
    s = scores(x, score)
    if dnas:
        s = s - np.logaddexp.reduce(s, axis=0, keepdims=True)
    s = s - np.logaddexp.reduce(s, axis=1, keepdims=True)
    return np.exp(s) @ x


def clusters(x, tol=1e-3):
    """Connected components of the graph linking points within tol."""
    d = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    adj = d <= tol
    label = -np.ones(len(x), dtype=int)
    count = 0
    for i in range(len(x)):
        if label[i] >= 0:
            continue
        stack = [i]
        label[i] = count
        while stack:
            j = stack.pop()
            nb = np.where(adj[j] & (label < 0))[0]
            label[nb] = count
            stack.extend(nb.tolist())
        count += 1
    return count


def read_collapse_csv(path):
    """{(scheme, step): (points [550, 2], clusters, modes)}"""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["scheme"], int(r["step"]))
            rows.setdefault(key, []).append(r)
    out = {}
    for key, rs in rows.items():
        rs.sort(key=lambda r: int(r["point"]))
        pts = np.array([[float(r["x"]), float(r["y"])] for r in rs])
        out[key] = (pts, {int(r["clusters"]) for r in rs}, [int(r["mode"]) for r in rs])
    return out


def check_collapse(tmp, args, label):
    path = os.path.join(tmp, "collapse.csv")
    js = run_json("explain", "--toy", "collapse", "--csv", path, *args)
    pts = read_collapse_csv(path)
    steps = js["steps"]
    check(len(pts) == 2 * (steps + 1), f"{label}: {len(pts)} (scheme, step) blocks")
    start = pts[("unas", 0)][0]
    check(np.array_equal(start, pts[("dnas", 0)][0]), f"{label}: both schemes start alike")
    check(pts[("unas", 0)][2] == [0] * 500 + [1] * 50, f"{label}: modes 500 then 50")
    for d, scheme in enumerate(("unas", "dnas")):
        x = start
        for t in range(steps + 1):
            if t:
                x = step(x, d, js["score"])
            got, counts, _ = pts[(scheme, t)]
            err = np.abs(got - x).max()
            check(err <= 1e-9, f"{label}: {scheme} step {t} differs from numpy by {err:.3g}")
            c = clusters(got)
            check(counts == {c}, f"{label}: {scheme} step {t}: CSV says {counts}, numpy {c}")
            check(js["clusters"][scheme][t] == c,
                  f"{label}: {scheme} step {t}: JSON says {js['clusters'][scheme][t]}, numpy {c}")
            x = got  # go on from maskkit's points: no drift through rounding
    return js, pts


def test_collapse(tmp):
    js, pts = check_collapse(tmp, [], "defaults")
    check(js["score"] == "dot" and js["sd"] == 0.1 and js["steps"] == 4, f"defaults: {js}")
    check(js["clusters"]["unas"][4] == 1, f"defaults: UNAS {js['clusters']['unas']}")
    check(js["clusters"]["dnas"][4] == 2, f"defaults: DNAS {js['clusters']['dnas']}")
    start = pts[("unas", 0)][0]
    for lo, hi, centre in ((0, 500, (1.8, 0.7)), (500, 550, (-1, -1))):
        m, s = start[lo:hi].mean(0), start[lo:hi].std(0)
        tol = 4 * 0.1 / np.sqrt(hi - lo)
        check(np.all(np.abs(m - centre) < tol), f"cloud {lo}..{hi}: mean {m}, want {centre}")
        check(np.all(np.abs(s - 0.1) < 0.1 * 6 / np.sqrt(hi - lo)),
              f"cloud {lo}..{hi}: sd {s}, want 0.1")

    # the literal reading: Gaussian kernel, variance 0.1, 7 steps
    js, _ = check_collapse(tmp, ["--score", "dist", "--sd", str(np.sqrt(0.1)), "--steps", "7",
                                 "--seed", "5"], "dist")
    check(js["clusters"]["unas"][4] > 2, f"dist: UNAS after 4 steps {js['clusters']['unas']}")
    check(js["clusters"]["unas"][7] == 1, f"dist: UNAS after 7 steps {js['clusters']['unas']}")
    check(js["clusters"]["dnas"][7] == 2, f"dist: DNAS after 7 steps {js['clusters']['dnas']}")

    # the table on stdout says the same as the JSON
    table = run("explain", "--toy", "collapse", "--steps", "2", "--seed", "9")
    js = run_json("explain", "--toy", "collapse", "--steps", "2", "--seed", "9")
    rows = [ln.split() for ln in table.splitlines() if ln[:4].strip().isdigit()]
    check([int(r[1]) for r in rows] == js["clusters"]["unas"], f"table vs JSON: {rows}")
    check([int(r[2]) for r in rows] == js["clusters"]["dnas"], f"table vs JSON: {rows}")


def closed(dnas, r, a):
    s = np.exp(-2 * a * a)
    if not dnas:
        return 2 * r * (1 - s * s) * a / ((1 + r * s) * (r + s))
    q = (r + s) / (r * s + 1)
    return 2 * q * r * (1 - s * s) * a / ((q + r * s) * (r + s * q))


def simulate(dnas, n0, n1, a, score):
    x = np.concatenate([np.full(n0, a), np.full(n1, -a)])[:, None]
    y = step(x, dnas, score)[:, 0]
    return y[:n0].mean() - y[n0:].mean()


def test_distance(tmp):
    path = os.path.join(tmp, "distance.csv")
    for score in ("dot", "dist"):
        js = run_json("explain", "--toy", "distance", "--score", score, "--a", "0.3,1.2",
                      "--r", "0.05..20:31", "--sizes", "1,3,7,40", "--csv", path)
        r = np.array(js["r"])
        want_r = np.logspace(np.log10(0.05), np.log10(20), 31)
        check(np.allclose(r, want_r, rtol=1e-12, atol=0), f"{score}: r grid")
        for d, scheme in enumerate(("unas", "dnas")):
            for i, a in enumerate(js["a"]):
                err = np.abs(np.array(js[scheme][i]) - closed(d, r, a)).max()
                check(err <= 1e-12, f"{score}: {scheme} a = {a}: closed forms off by {err:.3g}")
        pts = js["check"]["points"]
        check(len(pts) == 2 * 4 * 4, f"{score}: {len(pts)} check points")
        worst = [0.0, 0.0]
        for p in pts:
            for d, scheme in enumerate(("unas", "dnas")):
                sim = simulate(d, p["n0"], p["n1"], p["a"], score)
                check(abs(p[scheme + "_simulated"] - sim) <= 1e-12,
                      f"{score}: simulated {p} vs numpy {sim}")
                check(close(p[scheme], closed(d, p["n0"] / p["n1"], p["a"])),
                      f"{score}: closed {p}")
                check(abs(sim - closed(d, p["n0"] / p["n1"], p["a"])) <= 1e-9,
                      f"{score}: the closed form is not the step at {p}")
                worst[d] = max(worst[d], abs(p[scheme] - p[scheme + "_simulated"]))
        for d, scheme in enumerate(("unas", "dnas")):
            got = js["check"]["max_error"][scheme]
            check(got == worst[d] and got <= 1e-9, f"{score}: max error {got} vs {worst[d]}")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        kinds = [r["kind"] for r in rows]
        check(kinds.count("curve") == 2 * 31 and kinds.count("check") == 32
              and kinds[-1] == "max", f"{score}: CSV kinds")
        curve = [r for r in rows if r["kind"] == "curve"]
        check(all(abs(float(c["dnas"]) - closed(1, float(c["r"]), float(c["a"]))) <= 1e-12
                  for c in curve), f"{score}: CSV curves")
        check(float(rows[-1]["unas_error"]) == js["check"]["max_error"]["unas"]
              and float(rows[-1]["dnas_error"]) == js["check"]["max_error"]["dnas"],
              f"{score}: CSV max row {rows[-1]}")

    # the defaults: the acceptance, closed = simulated to 1e-9
    js = run_json("explain", "--toy", "distance")
    check(js["a"] == [0.25, 0.5, 0.75, 1] and len(js["r"]) == 201, "distance defaults")
    check(max(js["check"]["max_error"].values()) <= 1e-9, f"defaults: {js['check']['max_error']}")
    check(len(js["check"]["points"]) == 4 * 7 * 7, "defaults: 196 check points")
    text = run("explain", "--toy", "distance")
    check("check.max_error.unas" in text, "the text reports the largest error")


def test_prefix(tmp):
    """-o PREFIX writes the CSV and the JSON (and the PNG, with gnuplot)."""
    prefix = os.path.join(tmp, "run")
    if not os.environ.get("MASKKIT_REQUIRE_ALL") and not any(
            os.access(os.path.join(p, "gnuplot"), os.X_OK)
            for p in os.environ.get("PATH", "").split(os.pathsep)):
        return
    text = run("explain", "--toy", "collapse", "-o", prefix)
    with open(prefix + ".json") as f:
        js = json.load(f)
    check(js["clusters"]["unas"][4] == 1 and js["clusters"]["dnas"][4] == 2, "-o JSON")
    check("4 steps: UNAS 1 cluster, DNAS 2 clusters" in text, "-o keeps the table")
    with open(prefix + ".png", "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "-o PNG")
    check(len(read_collapse_csv(prefix + ".csv")) == 10, "-o CSV")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_collapse(tmp)
        test_distance(tmp)
        test_prefix(tmp)
    return checks.summary("test_explain_toy")


if __name__ == "__main__":
    sys.exit(main())
