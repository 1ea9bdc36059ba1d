#!/usr/bin/env python3
"""Peers of `maskkit sweep`: the same masks, timed in numpy and PyTorch.

    MASKKIT=build/maskkit python3 bench/peers.py [--n 1024] [--heads 4] [--head-dim 64]
        [--reps 5] [--patterns 'local64,strided32,bigbird(w=8)'] [-o peers.csv]

For each mask (a maskkit expression, exported with `maskkit gen EXPR --n N -o
m.npy` and, for FlexAttention, `--format blocks`), it times:
  * numpy: softmax(Q K^T / sqrt(d)) V dense, and with the boolean mask
    (scores outside set to -inf, empty rows to zero), float32;
  * torch (when importable): scaled_dot_product_attention dense and with the
    boolean mask, on CUDA when available else the CPU;
  * FlexAttention (torch >= 2.5 with CUDA): create_block_mask from the same
    mask (a mask_mod reading the boolean matrix) at the sweep's tile size.
Rows use the CSV columns of `maskkit sweep`, so one plot shows maskkit and its
peers: pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,
n,batch,heads,d,tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err.
Peers that are missing are reported on stderr and skipped.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

COLUMNS = ("pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,n,batch,heads,"
           "d,tile,median_s,min_s,speedup,gflops_dense,gflops_actual,max_err").split(",")


def timed(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def numpy_attention(q, k, v, mask=None):
    s = q @ np.swapaxes(k, -1, -2) / np.float32(np.sqrt(q.shape[-1]))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    den = p.sum(axis=-1, keepdims=True)
    return (p / np.where(den > 0, den, 1)) @ v


def split_patterns(text):
    """Commas separate patterns, except inside parentheses: bigbird(w=8,r=2)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [p for p in out + [cur] if p]


def tile_density(mask, tile):
    n = mask.shape[0]
    nt = -(-n // tile)
    pad = np.zeros((nt * tile, nt * tile), bool)
    pad[:n, :n] = mask
    return pad.reshape(nt, tile, nt, tile).any(axis=(1, 3)).mean()


def export_mask(expr, n, tmp):
    path = os.path.join(tmp, "m.npy")
    subprocess.run([os.environ.get("MASKKIT", "maskkit"), "gen", expr, "--n", str(n), "-o", path],
                   check=True, capture_output=True)
    return np.load(path)


def torch_peers(q, k, v, mask, reps):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        if not getattr(torch_peers, "said", False):
            print("peers: torch is not installed: SDPA and FlexAttention skipped",
                  file=sys.stderr)
            torch_peers.said = True
        return []
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    tq, tk, tv = (torch.from_numpy(x).to(dev)[None] for x in (q, k, v))
    tm = torch.from_numpy(mask).to(dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    rows = []
    for name, fn in (("sdpa_dense", lambda: F.scaled_dot_product_attention(tq, tk, tv)),
                     ("sdpa_masked", lambda: F.scaled_dot_product_attention(tq, tk, tv,
                                                                           attn_mask=tm))):
        rows.append((name, "torch-" + dev, *timed(lambda: (fn(), sync()), reps)))
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        if dev != "cuda":
            raise RuntimeError("FlexAttention is timed on CUDA only")
        bm = create_block_mask(lambda b, h, i, j: tm[i, j], None, None, mask.shape[0],
                               mask.shape[0], device=dev)
        flex = torch.compile(flex_attention)
        rows.append(("flex", "torch-cuda", *timed(lambda: (flex(tq, tk, tv, block_mask=bm),
                                                           sync()), reps)))
    except Exception as e:  # missing or unsupported: say so, go on
        print(f"peers: FlexAttention skipped: {e}", file=sys.stderr)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--patterns", default="local64,strided32,bigbird(w=8,r=2),longformer(w=32)")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    n, h, d = a.n, a.heads, a.head_dim
    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (h, n, d)).astype(np.float32) for _ in range(3))
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    print("# peers: numpy " + np.__version__, file=out)
    print(",".join(COLUMNS), file=out)
    dense_flops = 4.0 * h * n * n * d
    t_dense, t_min = timed(lambda: numpy_attention(q, k, v), a.reps)
    with tempfile.TemporaryDirectory() as tmp:
        for expr in split_patterns(a.patterns):
            mask = export_mask(expr, n, tmp)
            rho = 1.0 - mask.mean()
            act = 4.0 * h * mask.sum() * d
            rows = [("numpy_dense", "numpy", t_dense, t_min),
                    ("numpy_masked", "numpy", *timed(lambda: numpy_attention(q, k, v, mask),
                                                     a.reps))]
            rows += torch_peers(q, k, v, mask, a.reps)
            for kernel, backend, med, mn in rows:
                print(",".join(str(x) for x in (
                    expr, "", "", f"{rho:.6f}", f"{tile_density(mask, a.tile):.6f}", kernel,
                    "softmax", backend, "fp32", n, 1, h, d, a.tile, f"{med:.6g}", f"{mn:.6g}",
                    f"{t_dense / med:.4f}", f"{dense_flops / med / 1e9:.3f}",
                    f"{act / med / 1e9:.3f}", "")), file=out)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
