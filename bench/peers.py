#!/usr/bin/env python3
"""Peers of `maskkit sweep`: the same masks, timed in numpy and PyTorch.

    MASKKIT=build/maskkit python3 bench/peers.py [--n 1024] [--batch 1] [--heads 4]
        [--head-dim 64] [--dtype fp32|fp16|bf16] [--reps 5] [--tile 64]
        [--patterns 'local64,strided32,bigbird(w=8)'] [-o peers.csv] [--check-flex]

For each mask (a maskkit expression, exported with `maskkit gen EXPR --n N -o
m.npy` and, for FlexAttention, `--format flex --block TILE -o m.npz`), it times:
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
Where torch is importable, each pattern's .npz is also checked against
FlexAttention itself (a line on stderr): its four arrays must equal those
create_block_mask makes from the same mask_mod, padding included, and so
must BlockMask.to_dense().  --check-flex runs only the checks, on stdout,
adding a per-head layout and the compiled kernel (on the CPU without CUDA):
flex_attention with our BlockMask and the dense mask as mask_mod must agree
with SDPA and the boolean mask, and with an all-true mask_mod with SDPA over
the non-empty blocks filled (the kernel skips empty blocks, so this shows it
reads the layout); it exits 1 on a disagreement.
GPU times use CUDA events after warm-up (median of --reps), each event pair
around R back-to-back calls (R from a calibration call, so that a pair spans
about a millisecond: launch latency is amortised, as in `maskkit sweep`).
speedup is against the same backend's fastest dense row (numpy_dense for
numpy, the faster of sdpa_dense and sdpa_flash_dense for torch); max_err is
FlexAttention's largest difference from sdpa_masked on the non-empty rows.
FlexAttention is compiled once a shape: every pattern's BlockMask has the
same mask_mod, reading one padded mask tensor whose contents are replaced
(a new closure per pattern would recompile each time, and past dynamo's
cache limit fall back to eager silently: TORCH_LOGS=recompiles shows it).
The dense peers are timed once a run; --no-agreement skips the CPU check of
the .npz against create_block_mask (slow at large n).  Rows use the CSV
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


def size_args(n, kv=None):
    """gen's size options: n x n, or n queries x kv keys."""
    return ["--q-len", str(n), "--kv-len", str(kv)] if kv else ["--n", str(n)]


def export_mask(expr, n, tmp, seed=0, kv=None):
    path = os.path.join(tmp, "m.npy")
    subprocess.run([os.environ.get("MASKKIT", "maskkit"), "gen", expr, *size_args(n, kv),
                    "--seed", str(seed), "-o", path], check=True, capture_output=True)
    return np.load(path)


def export_flex(expr, n, tile, tmp, heads=None, kv=None):
    """maskkit's FlexAttention layout of the mask (--format flex), as numpy
    arrays; with heads (a JSON list of expressions), one head each."""
    path = os.path.join(tmp, "m.npz")
    what = ["--heads-file", heads] if heads else [expr]
    subprocess.run([os.environ.get("MASKKIT", "maskkit"), "gen", *what, *size_args(n, kv),
                    "--block", str(tile), "-o", path], check=True, capture_output=True)
    with np.load(path) as d:
        return {k: d[k] for k in d.files}


FLEX_ARRAYS = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")


def from_layout(layout, mask_mod, dev):
    """BlockMask.from_kv_blocks on maskkit's .npz arrays."""
    import torch
    from torch.nn.attention.flex_attention import BlockMask
    t = [torch.from_numpy(layout[k]).to(dev) for k in FLEX_ARRAYS]
    return BlockMask.from_kv_blocks(*t, BLOCK_SIZE=tuple(layout["block_size"].tolist()),
                                    mask_mod=mask_mod,
                                    seq_lengths=(int(layout["q_len"]), int(layout["kv_len"])))


def padded_mask(mask, layout, dev):
    """The boolean mask [.., q, kv] padded with False to whole blocks, so that
    a mask_mod may index every cell of a block cut by the end."""
    import torch
    qb, kb = layout["block_size"].tolist()
    nq, nk = layout["kv_indices"].shape[-2:]
    m = torch.zeros(mask.shape[:-2] + (nq * qb, nk * kb), dtype=torch.bool)
    m[..., :mask.shape[-2], :mask.shape[-1]] = torch.from_numpy(mask)
    return m.to(dev)


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


def flex_block_mask(mask, layout, dev):
    """FlexAttention's BlockMask from maskkit's exported layout; the mask_mod
    (reading the boolean matrix) is applied in partial tiles only."""
    from torch.nn.attention.flex_attention import BlockMask, create_block_mask
    tm = padded_mask(mask, layout, dev)

    def mask_mod(b, h, i, j):
        return tm[i, j]

    if not hasattr(BlockMask, "from_kv_blocks"):
        n = mask.shape[0]
        return create_block_mask(mask_mod, None, None, n, n, device=dev,
                                 BLOCK_SIZE=int(layout["block_size"][0]))
    return from_layout(layout, mask_mod, dev)


def flex_agrees(mask, layout, dev="cpu"):
    """(arrays, to_dense): whether our BlockMask equals create_block_mask's
    for mask_mod = the mask, [H, n, n] or [n, n]."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask
    tm = padded_mask(mask, layout, dev)
    heads = mask.shape[0] if mask.ndim == 3 else None

    def mask_mod(b, h, i, j):
        return tm[h, i, j] if heads else tm[i, j]

    ours = from_layout(layout, mask_mod, dev)
    ref = create_block_mask(mask_mod, 1, heads, mask.shape[-2], mask.shape[-1], device=dev,
                            BLOCK_SIZE=tuple(layout["block_size"].tolist()))
    arrays = all(torch.equal(getattr(ours, k).int(), getattr(ref, k).int()) for k in FLEX_ARRAYS)
    return arrays, torch.equal(ours.to_dense(), ref.to_dense())


def flex_kernel_errors(mask, layout, dev):
    """Largest differences of compiled flex_attention on our BlockMask from
    SDPA: with mask_mod = the mask against the mask; with an all-true
    mask_mod against the non-empty blocks filled (what the layout says)."""
    import torch
    import torch._dynamo
    import torch.nn.functional as F
    torch._dynamo.reset()
    flex = compiled_flex()
    n, kv = mask.shape
    q = torch.randn(1, 2, n, 64, device=dev)
    k, v = (torch.randn(1, 2, kv, 64, device=dev) for _ in range(2))
    tm = padded_mask(mask, layout, dev)
    got = flex(q, k, v, block_mask=from_layout(layout, lambda b, h, i, j: tm[i, j], dev))
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.from_numpy(mask).to(dev))
    err = max_err(got, want, mask)
    bm = from_layout(layout, lambda b, h, i, j: i >= 0, dev)
    qb, kb = layout["block_size"].tolist()
    filled = bm.to_dense()[0, 0].bool().repeat_interleave(qb, 0).repeat_interleave(kb, 1)[:n, :kv]
    got = flex(q, k, v, block_mask=bm)
    want = F.scaled_dot_product_attention(q, k, v, attn_mask=filled)
    return err, max_err(got, want, filled.cpu().numpy())


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


FLEX_MASK = {}  # the padded boolean mask flex's mask_mod reads, one tensor per shape


def flex_mask_mod(b, h, i, j):
    """One mask_mod for every pattern: it reads FLEX_MASK["t"], whose
    contents change between patterns but whose tensor (and so the compiled
    kernel's guards) stays, so flex_attention compiles once per shape."""
    return FLEX_MASK["t"][i, j]


def flex_set_mask(mask, layout, dev):
    padded = padded_mask(mask, layout, dev)
    t = FLEX_MASK.get("t")
    if t is None or t.shape != padded.shape or t.device != padded.device:
        FLEX_MASK["t"] = padded
    else:
        t.copy_(padded)


DENSE_ROWS = {}  # (shape, dtype) -> the dense peers' rows, timed once a run


def torch_dense_peers(tq, tk, tv, reps, dtype, dev):
    """SDPA without a mask (PyTorch's choice, then flash alone): the same
    for every pattern, so timed once and repeated in each pattern's rows."""
    import torch.nn.functional as F
    key = (tuple(tq.shape), dtype, dev)
    if key in DENSE_ROWS:
        return DENSE_ROWS[key]
    rows = [("sdpa_dense", "torch-" + dev,
             *torch_timed(lambda: F.scaled_dot_product_attention(tq, tk, tv), reps, dev), "")]
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
    DENSE_ROWS[key] = rows
    return rows


TENSORS = {}  # the torch copies of q, k, v, made once


def torch_peers(q, k, v, mask, layout, reps, dtype):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        say_once("torch", "torch is not installed: SDPA and FlexAttention skipped")
        return []
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    if TENSORS.get("key") != (id(q), dtype):
        TENSORS["t"] = [torch.from_numpy(x).to(dev, tdt) for x in (q, k, v)]
        TENSORS["key"] = (id(q), dtype)
    tq, tk, tv = TENSORS["t"]
    tm = torch.from_numpy(mask).to(dev)
    rows = list(torch_dense_peers(tq, tk, tv, reps, dtype, dev))
    rows.append(("sdpa_masked", "torch-" + dev,
                 *torch_timed(lambda: F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm),
                              reps, dev), ""))
    try:
        if dev != "cuda":
            raise RuntimeError("FlexAttention is timed on CUDA only")
        from torch.nn.attention.flex_attention import BlockMask
        flex = compiled_flex()
        flex_set_mask(mask, layout, dev)
        if hasattr(BlockMask, "from_kv_blocks"):
            bm = from_layout(layout, flex_mask_mod, dev)
        else:
            bm = flex_block_mask(mask, layout, dev)
        err = max_err(flex(tq, tk, tv, block_mask=bm),
                      F.scaled_dot_product_attention(tq, tk, tv, attn_mask=tm), mask)
        rows.append(("flex", "torch-cuda", *torch_timed(lambda: flex(tq, tk, tv, block_mask=bm),
                                                        reps, dev), f"{err:.3g}"))
    except Exception as e:  # missing or unsupported: say so, go on
        say_once("flex", f"FlexAttention skipped: {e}")
    return rows


def say_flex_agreement(expr, mask, layout):
    """One line on stderr: does the .npz give FlexAttention's own BlockMask?"""
    try:
        arrays, dense = flex_agrees(mask, layout)
    except ImportError:
        say_once("flex-check", "torch is not installed: the FlexAttention check is skipped")
        return
    print(f"peers: flex check {expr}: arrays {'equal' if arrays else 'DIFFER'}, to_dense "
          f"{'equal' if dense else 'DIFFERS'}", file=sys.stderr)


def check_flex_one(expr, n, kv, tile, tmp, dev):
    """One mask's layout against FlexAttention (a line on stdout); True if it agrees."""
    mask = export_mask(expr, n, tmp, kv=kv)
    layout = export_flex(expr, n, tile, tmp, kv=kv)
    arrays, dense = flex_agrees(mask, layout)
    size = f"n={n}" if kv is None else f"{n} x {kv}"
    line = f"flex check {expr} {size} tile={tile}: arrays {arrays}, to_dense {dense}"
    try:
        err, err_blocks = flex_kernel_errors(mask, layout, dev)
        ok = err < 1e-4 and err_blocks < 1e-4
        line += f", flex_attention ({dev}) vs sdpa {err:.3g}, layout only {err_blocks:.3g}"
    except Exception as e:  # no compiler, an old torch: say so, go on
        ok = True
        line += f", kernel skipped ({type(e).__name__}: {str(e).splitlines()[0][:80]})"
    print(line, flush=True)
    return arrays and dense and ok


def check_flex(a):
    """--check-flex: each pattern's layout against FlexAttention, then a
    per-head layout; the compiled kernel where torch.compile works."""
    try:
        import torch
    except ImportError:
        print("peers: torch is not installed: the FlexAttention check is skipped")
        return 0
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        patterns = split_patterns(a.patterns)
        # then rectangular masks: queries are the last n of kv positions (a KV cache)
        sizes = [(e, a.n, None) for e in patterns] + [
            ("causal", 1, a.n), ("causal&local100", 130, a.n), ("prefix50+local8", a.n, 77)]
        for expr, n, kv in sizes:
            bad += not check_flex_one(expr, n, kv, a.tile, tmp, dev)
        heads = os.path.join(tmp, "heads.json")
        with open(heads, "w") as f:
            f.write("[" + ", ".join(f'"{e}"' for e in patterns) + "]")
        # head k is bound with seed k, as `gen --heads-file` does
        masks = np.stack([export_mask(e, a.n, tmp, k) for k, e in enumerate(patterns)])
        arrays, dense = flex_agrees(masks, export_flex(None, a.n, a.tile, tmp, heads))
        print(f"flex check --heads-file ({len(patterns)} heads): arrays {arrays}, to_dense {dense}")
        bad += not (arrays and dense)
    print(f"flex check: {'all agree' if not bad else f'{bad} disagree'}")
    return 1 if bad else 0


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
    ap.add_argument("--no-agreement", action="store_true",
                    help="skip the check that the .npz gives FlexAttention's own BlockMask "
                    "(create_block_mask on the CPU: slow at large n)")
    ap.add_argument("--check-flex", action="store_true",
                    help="check maskkit's .npz layouts against FlexAttention, time nothing")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args()
    if a.check_flex:
        sys.exit(check_flex(a))
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
            layout = export_flex(expr, n, a.tile, tmp)
            if not a.no_agreement:
                say_flex_agreement(expr, mask, layout)
            rho = 1.0 - mask.mean()
            act = 4.0 * b * h * mask.sum() * d
            rows = []
            if t_dense:
                rows = [("numpy_dense", "numpy", *t_dense, ""),
                        ("numpy_masked", "numpy", *timed(lambda: numpy_attention(q, k, v, mask),
                                                         a.reps), "")]
            rows += torch_peers(q, k, v, mask, layout, a.reps, a.dtype)
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
