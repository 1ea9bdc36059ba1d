#!/usr/bin/env python3
"""The CPU attention kernels against numpy, at n = 2048, d = 64, B*H = 8.

1. `dense` (softmax) against numpy's softmax(Q K^T / sqrt(d)) V in float32,
   both medians of REPS runs (numpy in process, the kernel in process via
   bench_attn).
2. `block` at tile densities t from about 0.1 to 1 (windows of growing
   width on 64 x 64 tiles): its time over dense's, to compare with 1.3 t.
3. `csr` against dense over the same masks: where it stops being slower.

    BENCH_ATTN=build/bench/bench_attn python3 bench/attn_vs_numpy.py [N D BH REPS]
"""
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

BENCH = os.environ.get("BENCH_ATTN", "bench_attn")
LINE = re.compile(r"^(\w+)\s+density ([\d.]+) nnz\s+(\d+)\s+median ([\d.]+) s")


def numpy_attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s @ v


def bench(n, d, bh, reps, expr, kernels, tile=64):
    out = subprocess.run([BENCH, str(n), str(d), str(bh), str(tile), str(reps), "softmax", expr,
                          *kernels], check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            rows[m.group(1)] = (float(m.group(2)), int(m.group(3)), float(m.group(4)))
    return rows


def main():
    n, d, bh, reps = (int(x) for x in (sys.argv[1:5] if len(sys.argv) > 4 else (2048, 64, 8, 5)))
    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (bh, n, d)).astype(np.float32) for _ in range(3))
    numpy_attention(q, k, v)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        numpy_attention(q, k, v)
        times.append(time.perf_counter() - t0)
    t_np = statistics.median(times)
    dense = bench(n, d, bh, reps, "full", ["dense"])["dense"][2]
    print(f"n = {n}, d = {d}, B*H = {bh}, medians of {reps} runs, float32, "
          f"{os.cpu_count()} CPUs")
    print(f"  numpy softmax(QK^T/sqrt(d))V   {t_np:8.4f} s")
    print(f"  maskkit dense                  {dense:8.4f} s   numpy/dense = {t_np / dense:.2f}x")
    print(f"\n  {'mask':<24} {'density t':>9} {'block s':>9} {'block/dense':>11} {'1.3t':>6} "
          f"{'csr s':>9} {'csr/dense':>9}")
    crossing = None
    for w in (32, 96, 160, 256, 384, 512, 768, 1024, 1536, 2048):
        expr = f"local{w}"
        r = bench(n, d, bh, reps, expr, ["dense", "block", "csr"])
        t, _, tb = r["block"]
        tc = r["csr"][2]
        td = r["dense"][2]
        print(f"  {expr:<24} {t:9.4f} {tb:9.4f} {tb / td:11.3f} {1.3 * t:6.3f} {tc:9.4f} "
              f"{tc / td:9.3f}")
        if crossing is None and tc >= td:
            crossing = (expr, t)
    if crossing:
        print(f"\n  csr becomes slower than dense at {crossing[0]} (tile density {crossing[1]:.3f})")
    else:
        print("\n  csr stayed faster than dense on every mask tried")


if __name__ == "__main__":
    main()
