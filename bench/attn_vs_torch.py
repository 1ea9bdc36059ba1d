#!/usr/bin/env python3
"""maskkit's CPU attention against PyTorch's and numpy's, in one run.

    BENCH_ATTN=build/bench/bench_attn MASKKIT=build/maskkit \\
        python3 bench/attn_vs_torch.py [--n 2048,4096] [--d 64,128] [--heads 8]
        [--threads 2] [--reps 7] [--rounds 3] [--mask 'local256+global1'] [--tile 64]

For each (n, d), float32, [1, heads, n, d]:
  * maskkit dense, masked and block, in process (bench_attn: the library's
    kernels, as `maskkit sweep` times them);
  * torch: scaled_dot_product_attention without a mask (dense) and with the
    boolean mask (masked); FlexAttention compiled with torch.compile, its
    BlockMask from create_block_mask over the same mask (block, 128 tiles);
  * numpy: softmax(Q K^T / sqrt(d)) V dense, float32 (n <= 4096).
Each timer runs --reps times per round and the rounds alternate between
maskkit and its peers (--rounds), so a disturbance of the machine falls on
both; the table gives medians over all rounds and the ratio maskkit / peer
(below 1: maskkit faster).  GFLOP/s count 4 heads n^2 d (the dense work) and
are compared with the sgemm rate of OpenBLAS (what maskkit links) and of
torch (MKL) measured in the same run.

Then `maskkit attn` as a whole process (reading Q, K, V, writing O) against
its kernel time in process: wall time, and the time the command reports.

PyTorch is optional: without it the torch rows are skipped with a message.
It installs in a venv from PyPI (CPU wheels work; about 5 GB with CUDA libs):
    python3 -m venv ~/venv-torch && ~/venv-torch/bin/pip install torch numpy
then run this script with ~/venv-torch/bin/python.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attn_vs_numpy import numpy_attention  # noqa: E402  (bench/, beside this file)

BENCH = os.environ.get("BENCH_ATTN", "bench_attn")
MASKKIT = os.environ.get("MASKKIT", "maskkit")
LINE = re.compile(r"^(\w+)\s+density ([\d.]+) nnz\s+(\d+)\s+median ([\d.]+) s")


def maskkit_round(n, d, heads, reps, expr, tile):
    out = subprocess.run([BENCH, str(n), str(d), str(heads), str(tile), str(reps), "softmax",
                          expr, "dense", "masked", "block"], check=True, capture_output=True,
                         text=True).stdout
    got = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            got[m.group(1)] = float(m.group(4))
    return got


def seconds(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def timed(fn, reps):
    """Every one of reps runs after a warm-up, in seconds."""
    fn()
    return [seconds(fn) for _ in range(reps)]


def load_torch(threads):
    try:
        import torch
    except ImportError:
        print("torch is not importable: its rows are skipped (install it in a venv: "
              "python3 -m venv ~/venv-torch && ~/venv-torch/bin/pip install torch numpy, "
              "then run this script with ~/venv-torch/bin/python)", file=sys.stderr)
        return None
    torch.set_num_threads(threads)
    return torch


class TorchPeers:
    """SDPA dense and masked, and compiled FlexAttention, on one (n, d)."""

    def __init__(self, torch, q, k, v, mask):
        self.torch = torch
        F = torch.nn.functional
        self.q, self.k, self.v = (torch.from_numpy(x) for x in (q, k, v))
        self.mask = torch.from_numpy(mask)
        self.fns = {
            "dense": lambda: F.scaled_dot_product_attention(self.q, self.k, self.v),
            "masked": lambda: F.scaled_dot_product_attention(self.q, self.k, self.v,
                                                             attn_mask=self.mask),
        }
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            dense = self.mask

            def mask_mod(b, h, i, j):
                return dense[i, j]

            n = mask.shape[0]
            bm = create_block_mask(mask_mod, None, None, n, n, device="cpu", BLOCK_SIZE=128)
            flex = torch.compile(flex_attention)
            self.fns["block"] = lambda: flex(self.q, self.k, self.v, block_mask=bm)
        except Exception as e:  # noqa: BLE001 - any failure only drops the row
            print(f"FlexAttention unavailable on the CPU here: {e}", file=sys.stderr)

    def round(self, reps):
        with self.torch.inference_mode():
            return {name: timed(fn, reps) for name, fn in self.fns.items()}


def sgemm_rates(torch, threads):
    out = subprocess.run([BENCH, "sgemm", "2048", "5"], check=True, capture_output=True,
                         text=True).stdout
    rates = {"openblas": float(out.split()[-2])}
    if torch:
        a = torch.randn(2048, 2048)
        t = statistics.median(timed(lambda: a @ a.T, 5))
        rates["torch (MKL)"] = 2 * 2048 ** 3 / t / 1e9
    return rates


def whole_process(n, d, heads, reps, tmp, kernel_s):
    rng = np.random.default_rng(0)
    files = []
    for name in "qkv":
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, rng.standard_normal((1, heads, n, d)).astype(np.float32))
        files.append(path)
    out = os.path.join(tmp, "o.npy")
    walls, reported = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = subprocess.run([MASKKIT, "attn", *files, "-o", out, "--backend", "cpu", "--json"],
                           check=True, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        reported.append(json.loads(r.stdout)["seconds"])
    io_bytes = 4 * heads * n * d * 4
    print(f"\nmaskkit attn, whole process, n={n} d={d} heads={heads} (reps {reps}):")
    print(f"  in-process kernel (bench_attn dense)  {kernel_s:.4f} s")
    print(f"  reported by the command               {statistics.median(reported):.4f} s"
          f"  ({statistics.median(reported) / kernel_s:.2f}x)")
    print(f"  whole process (wall)                  {statistics.median(walls):.4f} s"
          f"  ({statistics.median(walls) / kernel_s:.2f}x; Q, K, V and O are "
          f"{io_bytes / 2**20:.0f} MiB)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="2048,4096")
    ap.add_argument("--d", default="64,128")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mask", default="local256+global1")
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--no-whole", action="store_true", help="skip the maskkit attn process")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    torch = load_torch(args.threads)
    rates = sgemm_rates(torch, args.threads)
    print("sgemm at 2048^3: " + ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in rates.items()))
    rows = []
    first_dense = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.n.split(",")):
            mpath = os.path.join(tmp, "m.npy")
            subprocess.run([MASKKIT, "gen", args.mask, "--n", str(n), "-o", mpath], check=True)
            mask = np.load(mpath)
            for d in (int(x) for x in args.d.split(",")):
                rng = np.random.default_rng(1)
                q, k, v = (rng.standard_normal((1, args.heads, n, d)).astype(np.float32)
                           for _ in range(3))
                peers = TorchPeers(torch, q, k, v, mask) if torch else None
                mine, theirs, numpy_t = {}, {}, []
                for _ in range(args.rounds):
                    for name, t in maskkit_round(n, d, args.heads, args.reps, args.mask,
                                                 args.tile).items():
                        mine.setdefault(name, []).append(t)
                    if peers:
                        for name, ts in peers.round(args.reps).items():
                            theirs.setdefault(name, []).extend(ts)
                    if n <= 4096:
                        numpy_t.extend(timed(lambda: numpy_attention(q, k, v),
                                             max(1, args.reps // 3)))
                flops = 4.0 * args.heads * n * n * d
                for name in ("dense", "masked", "block"):
                    m = statistics.median(mine[name])
                    p = statistics.median(theirs[name]) if name in theirs else None
                    rows.append((n, d, name, m, p, flops))
                if numpy_t:
                    rows.append((n, d, "numpy", statistics.median(mine["dense"]),
                                 statistics.median(numpy_t), flops))
                if first_dense is None:
                    first_dense = (n, d, statistics.median(mine["dense"]))
        peer_name = {"dense": "SDPA", "masked": "SDPA+mask", "block": "FlexAttention",
                     "numpy": "numpy dense"}
        print(f"\nfloat32, [1, {args.heads}, n, d], {args.threads} threads, mask "
              f"'{args.mask}' (masked, block), medians of {args.rounds} x {args.reps}")
        print("GFLOP/s: the dense work 4 heads n^2 d over maskkit's time (block and masked "
              "do less or more); 'of sgemm': that rate over OpenBLAS's sgemm rate")
        print(f"{'n':>5} {'d':>4} {'kernel':<7} {'maskkit s':>10} {'peer':<13} {'peer s':>10} "
              f"{'ratio':>6} {'GFLOP/s':>8} {'of sgemm':>8}")
        for n, d, name, m, p, flops in rows:
            kname = "dense" if name == "numpy" else name
            gf = flops / m / 1e9
            ratio = f"{m / p:6.2f}" if p else "     -"
            ps = f"{p:10.4f}" if p else "         -"
            print(f"{n:5d} {d:4d} {kname:<7} {m:10.4f} {peer_name[name]:<13} {ps} {ratio} "
                  f"{gf:8.1f} {gf / rates['openblas']:8.0%}")
        if not args.no_whole and first_dense:
            whole_process(first_dense[0], first_dense[1], args.heads, args.reps, tmp,
                          first_dense[2])


if __name__ == "__main__":
    main()
