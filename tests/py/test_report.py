#!/usr/bin/env python3
"""Cross-checks the tables of `maskkit report` against independent numpy
masks: SparseBERT Fig. 1 (n = 16) and Table 4 (n = 128, with and without the
diagonal), Adaptive Axis Attention Fig. 1 (N = 8), and that paper's Eq. 9
(mean over samples of 1 - |M_i|/N_i^2 at each sample's length, against the
classic figure at the longest length) over the lengths file the report
writes.  Counts must match exactly, the CSV's sparsities as printed."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

import checks
from checks import check

SECTIONS = "eq9,sparsebert-fig1,aaa-fig1,sparsebert-table4"


def pattern(name, n):
    """Dense boolean mask of a deterministic built-in pattern at length n,
    from the definitions 'maskkit patterns' prints (d = |i - j|)."""
    i, j = np.indices((n, n))
    d = np.abs(i - j)
    if name.startswith("local") and name[5:].isdigit():
        return d <= int(name[5:])
    if name == "global1":
        return (i == 0) | (j == 0)
    if name == "diagonal(offsets=0,3)":
        return (d == 0) | (d == 3)
    if name == "axis(rows=2,5,cols=2,5)":
        return np.isin(i, (2, 5)) | np.isin(j, (2, 5))
    if "+" in name:
        a, b = name.split("+")
        return pattern(a, n) | pattern(b, n)
    if name == "star":
        return (d <= 1) | (i == 0) | (j == 0)
    if name == "logsparse":
        return (d == 0) | ((d & (d - 1)) == 0)
    if name == "strided":  # l = 4
        return (d < 4) | (d % 4 == 0)
    if name == "fixed":  # l = 4, c = 1
        return (i // 4 == j // 4) | (j % 4 >= 4 - 1)
    raise ValueError(name)


def read_csv(out, name):
    """The table's rows as dicts.  A row with more fields than the header (an
    expression such as diagonal(offsets=0,3) written unquoted) is a failure;
    its 'expr' is then rejoined so that its numbers are still checked."""
    with open(os.path.join(out, "tables", name), newline="") as f:
        header, *rows = list(csv.reader(f))
    dicts = []
    for k, row in enumerate(rows, 2):
        extra = len(row) - len(header)
        check(extra == 0, f"{name} line {k}: {len(row)} fields, the header has {len(header)}: "
              f"{','.join(row)}")
        if extra > 0 and "expr" in header:
            e = header.index("expr")
            row = row[:e] + [",".join(row[e:e + extra + 1])] + row[e + extra + 1:]
        dicts.append(dict(zip(header, row)))
    return dicts


def gnuplot_missing():
    gp = os.environ.get("MASKKIT_GNUPLOT") or os.environ.get("GNUPLOT") or "gnuplot"
    return not shutil.which(gp)


def make_report(out):
    """Runs the cheap sections; without gnuplot only their figures fail."""
    r = subprocess.run([os.environ["MASKKIT"], "report", "--out", out, "--quick", "--quiet",
                        "--only", SECTIONS], capture_output=True, text=True)
    if r.returncode == 1 and gnuplot_missing() and not os.environ.get("MASKKIT_REQUIRE_ALL"):
        print("SKIP figures: gnuplot not installed; checking the tables only")
    elif r.returncode != 0:
        sys.exit(f"FAIL: maskkit report --only {SECTIONS} exited {r.returncode}: "
                 f"{r.stderr.strip()}")


def check_counts(out, table, want_n):
    """Each row's count equals numpy's, and its sparsity is 1 - count/n^2 to 6 places."""
    rows = read_csv(out, table)
    check([r["expr"] for r in rows] == list(want_n), f"{table}: patterns {[r['expr'] for r in rows]}")
    for r in rows:
        expr = r["expr"]
        if expr not in want_n:
            continue
        n = want_n[expr]
        check(r["n"] == str(n), f"{table} {expr}: n {r['n']} vs {n}")
        if expr in ("longformer", "bigbird"):  # random draws: only the sparsity follows
            count = int(r["count"])
        else:
            count = int(pattern(expr, n).sum())
            check(r["count"] == str(count), f"{table} {expr}: count {r['count']} vs numpy {count}")
        check(r["sparsity"] == f"{1 - count / n**2:.6f}",
              f"{table} {expr}: sparsity {r['sparsity']} vs numpy {1 - count / n**2:.6f}")


def check_fig1(out):
    check_counts(out, "sparsebert_fig1.csv",
                 {e: 16 for e in ("star", "logsparse", "strided", "fixed", "longformer",
                                  "bigbird")})
    check_counts(out, "aaa_fig1.csv",
                 {e: 8 for e in ("local1", "global1", "diagonal(offsets=0,3)",
                                 "axis(rows=2,5,cols=2,5)", "local1+global1")})


def check_table4(out):
    n = 128
    rows = {r["pattern"]: r for r in read_csv(out, "sparsebert_table4.csv")}
    check(sorted(rows) == sorted(("star", "logsparse", "strided", "fixed", "longformer",
                                  "bigbird")), f"table 4: patterns {sorted(rows)}")
    for p, r in rows.items():
        check(r["n"] == str(n), f"table 4 {p}: n {r['n']}")
        count, nodiag = int(r["count"]), int(r["count_nodiag"])
        if p in ("star", "logsparse", "strided", "fixed"):
            m = pattern(p, n)
            check(count == int(m.sum()), f"table 4 {p}: count {count} vs numpy {int(m.sum())}")
            md = m & ~np.eye(n, dtype=bool)
            check(nodiag == int(md.sum()), f"table 4 {p}: count_nodiag {nodiag} vs numpy")
        # every pattern here holds the diagonal (longformer and bigbird: d <= w)
        check(count - nodiag == n, f"table 4 {p}: {count} - {nodiag} is not {n}")
        for c, s, pct in ((count, "sparsity", "sparsity_pct"),
                          (nodiag, "sparsity_nodiag", "sparsity_nodiag_pct")):
            rho = 1 - c / n**2
            check(r[s] == f"{rho:.6f}", f"table 4 {p}: {s} {r[s]} vs numpy {rho:.6f}")
            check(r[pct] == f"{100 * rho:.4f}", f"table 4 {p}: {pct} {r[pct]} vs {100 * rho:.4f}")


def check_eq9(out):
    lengths = np.loadtxt(os.path.join(out, "tables", "eq9_lengths.txt"), dtype=np.int64, ndmin=1)
    check(lengths.size > 100 and lengths.min() >= 1, f"eq9 lengths: {lengths.size} samples")
    nmax = int(lengths.max())
    rows = {r["pattern"]: r for r in read_csv(out, "eq9.csv")}
    for name in ("local2", "global1", "local2+global1", "star", "strided", "fixed", "logsparse"):
        r = rows.get(name)
        check(r is not None, f"eq9.csv has no row {name}")
        if r is None:
            continue
        rho = {m: 1 - pattern(name, m).sum() / m**2 for m in np.unique(lengths)}
        eq9 = np.mean([rho[m] for m in lengths])
        classic = 1 - pattern(name, nmax).sum() / nmax**2
        check(r["n_max"] == str(nmax), f"eq9 {name}: n_max {r['n_max']} vs {nmax}")
        for col, want in (("sparsity_eq9", eq9), ("sparsity_classic", classic),
                          ("difference", classic - eq9)):
            check(abs(float(r[col]) - want) <= 1e-6, f"eq9 {name}: {col} {r[col]} vs numpy {want:.7f}")
    # local2 by its closed form, n(2w+1) - w(w+1) for n > w
    check(all(pattern("local2", m).sum() == (m * 5 - 6 if m > 2 else m * m) for m in (1, 2, 3, 9)),
          "local2 closed form")


def check_svgs(out):
    """Every SVG the report drew is well-formed XML with an <svg> root (a
    browser opens it)."""
    if gnuplot_missing():
        return
    names = sorted(f for f in os.listdir(os.path.join(out, "figures")) if f.endswith(".svg"))
    check(len(names) >= 3, f"SVGs drawn: {names}")
    for name in names:
        try:
            root = ET.parse(os.path.join(out, "figures", name)).getroot()
            check(root.tag.endswith("svg"), f"{name}: root element {root.tag}")
        except ET.ParseError as e:
            check(False, f"{name}: not well-formed XML: {e}")


def check_png_sizes(out):
    """Every PNG the report drew is at most 500 KB (the report's limit;
    tests/report/page_check.py checks a whole report the same way)."""
    figures = os.path.join(out, "figures")
    for name in sorted(os.listdir(figures)) if os.path.isdir(figures) else []:
        if name.endswith(".png"):
            size = os.path.getsize(os.path.join(figures, name))
            check(size <= 500_000, f"{name}: {size} bytes, over 500000")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report")
        make_report(out)
        check_fig1(out)
        check_table4(out)
        check_eq9(out)
        check_svgs(out)
        check_png_sizes(out)
    return checks.summary("test_report")


if __name__ == "__main__":
    sys.exit(main())
