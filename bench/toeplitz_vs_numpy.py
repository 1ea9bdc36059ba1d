#!/usr/bin/env python3
"""maskkit toeplitz against numpy doing the same work, at n = 4096, d = 1024.

The work: P = E @ E.T in float64 (numpy hands A @ A.T to BLAS syrk, as
maskkit does), the mean of P along each diagonal, RSS = sum (P - T)^2 and
TSS = sum (P - mean P)^2, for the whole matrix and its leading 128 x 128
block.  numpy is timed twice: in process on an already loaded E (the
kernel alone), and as a whole `python3 -c ...` process that reads the HDF5
file as maskkit does.  Prints medians of REPEAT runs (default 5) and the
ratios; checks that both give the same R^2.

    MASKKIT=build/maskkit python3 bench/toeplitz_vs_numpy.py [N D REPEAT]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

MASKKIT = os.environ.get("MASKKIT", "maskkit")

NUMPY_WORK = """
def toeplitz_r2(p, k=None):
    if k is not None:
        p = p[:k, :k]
    n = p.shape[0]
    idx = (np.arange(n)[None, :] - np.arange(n)[:, None] + n - 1).ravel()
    t = np.bincount(idx, weights=p.ravel(), minlength=2 * n - 1)
    t /= np.bincount(idx, minlength=2 * n - 1)
    rss = np.sum((p.ravel() - t[idx]) ** 2)
    tss = np.sum((p - p.mean()) ** 2)
    return 1.0 - rss / tss, rss, tss

def work(e):
    e = np.asarray(e, dtype=np.float64)
    p = e @ e.T
    return toeplitz_r2(p), toeplitz_r2(p, 128)
"""

WHOLE = """
import sys, h5py, numpy as np
{work}
with h5py.File(sys.argv[1], "r") as f:
    e = f["bert/embeddings/position_embeddings/embeddings:0"][...]
print(work(e)[0][0])
"""


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main():
    n, d, repeat = (int(x) for x in (sys.argv[1:4] if len(sys.argv) > 3 else (4096, 1024, 5)))
    rng = np.random.default_rng(0)
    pos = np.arange(n)[:, None]
    freq = rng.uniform(1e-3, 0.5, d // 2)
    e = np.concatenate([np.sin(pos * freq), np.cos(pos * freq)], axis=1)
    e = (e + 0.05 * rng.standard_normal((n, d))).astype(np.float32)
    scope = {"np": np}
    exec(NUMPY_WORK, scope)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "e.h5")
        with h5py.File(path, "w") as f:
            f["bert/embeddings/position_embeddings/embeddings:0"] = e
        cmd = [MASKKIT, "toeplitz", path, "--first", "128", "--json"]
        mk_out = json.loads(subprocess.run(cmd, check=True, capture_output=True).stdout)
        t_mk, all_mk = median_time(lambda: subprocess.run(cmd, check=True,
                                                          capture_output=True), repeat)
        (r2_np, _, _), _ = scope["work"](e)
        t_np, all_np = median_time(lambda: scope["work"](e), repeat)
        whole = [sys.executable, "-c", WHOLE.format(work=NUMPY_WORK), path]
        t_whole, all_whole = median_time(lambda: subprocess.run(whole, check=True,
                                                                capture_output=True), repeat)
    agree = abs(mk_out["r2"] - r2_np) <= 1e-9
    print(f"n = {n}, d = {d}, {repeat} runs each, medians (threads: "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"{os.cpu_count()} CPUs)")
    print(f"  maskkit toeplitz (whole process)    {t_mk:8.3f} s   "
          f"runs {' '.join(f'{x:.3f}' for x in all_mk)}")
    print(f"  numpy in process (E loaded)         {t_np:8.3f} s   "
          f"runs {' '.join(f'{x:.3f}' for x in all_np)}")
    print(f"  numpy whole process (h5py + work)   {t_whole:8.3f} s   "
          f"runs {' '.join(f'{x:.3f}' for x in all_whole)}")
    print(f"  ratio numpy in process / maskkit    {t_np / t_mk:8.2f}x")
    print(f"  ratio numpy whole / maskkit         {t_whole / t_mk:8.2f}x")
    print(f"  R^2 maskkit {mk_out['r2']:.12f}, numpy {r2_np:.12f}: "
          f"{'agree to 1e-9' if agree else 'DISAGREE'}")
    sys.exit(0 if agree else 1)


if __name__ == "__main__":
    main()
