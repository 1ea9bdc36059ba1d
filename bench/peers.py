#!/usr/bin/env python3
"""Peers of `maskkit sweep`: the same masks, timed in numpy and PyTorch.

    MASKKIT=build/maskkit python3 bench/peers.py [--n 1024] [--batch 1] [--heads 4]
        [--head-dim 64] [--dtype fp32|fp16|bf16] [--reps 5] [--tile 64]
        [--patterns 'local64,strided32,bigbird(w=8)'] [-o peers.csv]

For each mask (a maskkit expression, exported with `maskkit gen EXPR --n N -o
m.npy` and, for FlexAttention, `--format blocks --block TILE`), it times:
  * numpy: softmax(Q K^T / sqrt(d)) V dense, and with the boolean mask
    (scores outside set to -inf, empty rows to zero), float32;
  * torch (when importable): scaled_dot_product_attention dense and with the
    boolean mask, on CUDA when available else the CPU, in --dtype;
  * on CUDA in fp16/bf16: SDPA restricted to the flash backend (dense: flash
    attention takes no mask);
  * FlexAttention (torch >= 2.5 with CUDA), compiled with torch.compile: its
    BlockMask built from maskkit's exported block layout (partial blocks
    apply a mask_mod reading the boolean matrix, full blocks skip it),
    through BlockMask.from_kv_blocks, else create_block_mask.
GPU times use CUDA events after warm-up (median of --reps), each event pair
around R back-to-back calls (R from a calibration call, so that a pair spans
about a millisecond: launch latency is amortised, as in `maskkit sweep`).
speedup is against the same backend's fastest dense row (numpy_dense for
numpy, the faster of sdpa_dense and sdpa_flash_dense for torch); max_err is
FlexAttention's largest difference from sdpa_masked on the non-empty rows.
FlexAttention is compiled once; torch._dynamo.reset() before each pattern
keeps its mask_mod from piling up recompilations past dynamo's cache limit
(which would fall back to eager silently): run with TORCH_LOGS=recompiles to
check that each pattern compiles once.  Rows use the CSV
columns of `maskkit sweep`, so one plot shows maskkit and its peers:
pattern,param,target,achieved,tile_density,kernel,norm,backend,dtype,
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

import json

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


def export_blocks(expr, n, tile, tmp):
    """maskkit's block layout of the mask (the FlexAttention-style JSON)."""
    path = os.path.join(tmp, "m.json")
    subprocess.run([os.environ.get("MASKKIT", "maskkit"), "gen", expr, "--n", str(n),
                    "--format", "blocks", "--block", str(tile), "-o", path],
                   check=True, capture_output=True)
    with open(path) as f:
        return json.load(f)


def say_once(key, text):
    said = getattr(say_once, "said", set())
    if key not in said:
        print("peers: " + text, file=sys.stderr)
        said.add(key)
        say_once.said = said


def events_timed(fn, calls):
    """Seconds per call of calls back-to-back calls between two CUDA events."""
    import torch
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / calls


def torch_timed(fn, reps, dev):
    """Median and minimum seconds per call: CUDA events after warm-up on a GPU."""
    import torch
    if dev != "cuda":
        return timed(fn, reps)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    one = events_timed(fn, 1)
    calls = max(1, min(100, int(1e-3 / max(one, 1e-9))))
    times = [events_timed(fn, calls) for _ in range(reps)]
    return statistics.median(times), min(times)


def flex_block_mask(tm, blocks, n, dev):
    """FlexAttention's BlockMask from maskkit's exported tiles; the mask_mod
    (reading the boolean matrix) is applied in partial tiles only."""
    import torch
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask

    def mask_mod(b, h, i, j):
        return tm[i, j]

    if not hasattr(BlockMask, "from_kv_blocks"):
        return create_block_mask(mask_mod, None, None, n, n, device=dev,
                                 BLOCK_SIZE=blocks["block"])

    def lists(prefix):
        nb = len(blocks[prefix + "num_blocks"])
        idx = torch.zeros((1, 1, nb, nb), dtype=torch.int32)
        for r, row in enumerate(blocks[prefix + "indices"]):
            idx[0, 0, r, :len(row)] = torch.tensor(row, dtype=torch.int32)
        num = torch.tensor(blocks[prefix + "num_blocks"], dtype=torch.int32)[None, None]
        return num.to(dev), idx.to(dev)

    kv_num, kv_idx = lists("kv_")
    full_num, full_idx = lists("full_kv_")
    try:
        # without seq_lengths the mask is nb * tile long, more than n when
        # the tile does not divide n, and flex_attention refuses it
        return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                        BLOCK_SIZE=blocks["block"], mask_mod=mask_mod,
                                        seq_lengths=(n, n))
    except TypeError:  # a torch without seq_lengths
        return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                        BLOCK_SIZE=blocks["block"], mask_mod=mask_mod)


def compiled_flex():
    """torch.compile(flex_attention), made once for every pattern."""
    import torch
    from torch.nn.attention.flex_attention import flex_attention
    if not hasattr(compiled_flex, "fn"):
        compiled_flex.fn = torch.compile(flex_attention)
    return compiled_flex.fn


def max_err(a, b, mask):
    """Largest |a - b| on the rows of mask that are not empty."""
    import torch
    rows = torch.from_numpy(mask.any(axis=1)).to(a.device)
    diff = (a.float() - b.float()).abs()[..., rows, :]
    return float(diff.max()) if diff.numel() else 0.0


def torch_peers(q, k, v, mask, blocks, reps, dtype):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        say_once("torch", "torch is not installed: SDPA and FlexAttention skipped")
        return []
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    tq, tk, tv = (torch.from_numpy(x).to(dev, tdt) for x in (q, k, v))
    tm = torch.from_numpy(mask).to(dev)
    n = mask.shape[0]
    rows = []
    for name, fn in (("sdpa_dense", lambda: F.scaled_dot_product_attention(tq, tk, tv)),
                     ("sdpa_masked", lambda: F.scaled_dot_product_attention(tq, tk, tv,
                                                                           attn_mask=tm))):
        rows.append((name, "torch-" + dev, *torch_timed(fn, reps, dev), ""))
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
        if dev != "cuda" or dtype == "fp32":
            raise RuntimeError("flash attention needs CUDA and fp16 or bf16")
        # entered once, outside the timed calls
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            t = torch_timed(lambda: F.scaled_dot_product_attention(tq, tk, tv), reps, dev)
        rows.append(("sdpa_flash_dense", "torch-cuda", *t, ""))
    except Exception as e:  # missing or unsupported: say so, go on
        say_once("flash", f"SDPA flash skipped: {e}")
    try:
        if dev != "cuda":
            raise RuntimeError("FlexAttention is timed on CUDA only")
        import torch._dynamo
        torch._dynamo.reset()  # a fresh cache for this pattern's mask_mod
        flex = compiled_flex()
        bm = flex_block_mask(tm, blocks, n, dev)
        err = max_err(flex(tq, tk, tv, block_mask=bm),
                      F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm), mask)
        rows.append(("flex", "torch-cuda", *torch_timed(lambda: flex(tq, tk, tv, block_mask=bm),
                                                        reps, dev), f"{err:.3g}"))
    except Exception as e:  # missing or unsupported: say so, go on
        say_once("flex", f"FlexAttention skipped: {e}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="fp32",
                    help="torch's compute type (numpy is always fp32)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tile", type=int, default=64)
    ap.add_argument("--patterns", default="local64,strided32,bigbird(w=8,r=2),longformer(w=32)")
    ap.add_argument("--no-numpy", action="store_true", help="time the torch peers only")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    n, b, h, d = a.n, a.batch, a.heads, a.head_dim
    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (b, h, n, d)).astype(np.float32) for _ in range(3))
    # a line at a time: a run cut short keeps every row it finished
    out = sys.stdout if a.output == "-" else open(a.output, "w", buffering=1)
    print("# peers: numpy " + np.__version__, file=out)
    print(",".join(COLUMNS), file=out)
    dense_flops = 4.0 * b * h * n * n * d
    t_dense = timed(lambda: numpy_attention(q, k, v), a.reps) if not a.no_numpy else None
    with tempfile.TemporaryDirectory() as tmp:
        for expr in split_patterns(a.patterns):
            mask = export_mask(expr, n, tmp)
            blocks = export_blocks(expr, n, a.tile, tmp)
            rho = 1.0 - mask.mean()
            act = 4.0 * b * h * mask.sum() * d
            rows = []
            if t_dense:
                rows = [("numpy_dense", "numpy", *t_dense, ""),
                        ("numpy_masked", "numpy", *timed(lambda: numpy_attention(q, k, v, mask),
                                                         a.reps), "")]
            rows += torch_peers(q, k, v, mask, blocks, a.reps, a.dtype)
            for kernel, backend, med, mn, err in rows:
                dtype = "fp32" if backend == "numpy" else a.dtype
                dense = min((r[2] for r in rows if r[1] == backend and r[0].endswith("dense")),
                            default=None)
                print(",".join(str(x) for x in (
                    expr, "", "", f"{rho:.6f}", f"{tile_density(mask, a.tile):.6f}", kernel,
                    "softmax", backend, dtype, n, b, h, d, a.tile, f"{med:.6g}", f"{mn:.6g}",
                    f"{dense / med:.4f}" if dense else "", f"{dense_flops / med / 1e9:.3f}",
                    f"{act / med / 1e9:.3f}", err)), file=out)
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
