#!/usr/bin/env python3
"""maskkit's CPU attention against PyTorch's and numpy's, in one run.

    BENCH_ATTN=build/bench/bench_attn MASKKIT=build/maskkit \\
        python3 bench/attn_vs_torch.py [--n 2048,4096] [--d 64,128] [--heads 8]
        [--threads 2] [--reps 7] [--rounds 3] [--mask 'local256+global1'] [--tile 64]

For each (n, d), float32, [1, heads, n, d], Q, K and V standard normal are
made here once and the same bytes go to both sides (to bench_attn as a raw
file, -i; to torch and numpy as tensors):
  * maskkit dense, masked and block, in process (bench_attn: the library's
    kernels, as `maskkit sweep` times them, with the thread settings the
    program makes: OMP_WAIT_POLICY=PASSIVE, OPENBLAS_THREAD_TIMEOUT=4, unless
    set; torch keeps its defaults);
  * torch: scaled_dot_product_attention without a mask (dense) and with the
    boolean mask (masked); FlexAttention at its best set-up (block, 128
    tiles): the closed-form mask_mod that `maskkit gen EXPR --format flex-py`
    writes (index arithmetic, no n x n lookup), its BlockMask from
    create_block_mask compiled for the size (torch.compile(create_block_mask),
    what _compile=True did), flex_attention
    compiled with torch.compile for the shape (dynamic=False);
  * numpy: softmax(Q K^T / sqrt(d)) V dense, float32 (n <= 4096).
maskkit and its peer alternate run by run: bench_attn serves in a process of
its own (-s: it runs the kernel each line of its stdin names and answers
with the seconds), and each of the --rounds x --reps runs of a kernel is
paired with one run of its peer right after or before it (the order swaps
every pair), after one warm-up run of each: this host's speed moves by
tens of percent from one minute to the next, and timed a few seconds apart
the two sides would meet different machines.  The table gives the medians
of all runs, their ratio maskkit / peer (below 1: maskkit faster), and the
quartiles of the pairs' own ratios.

The machine's bounds are measured in the same run, each the best of several
readings: the sgemm peak (OpenBLAS, what maskkit links, through bench_attn
sgemm; torch's MKL), and the memory's read rate (bench_attn bandwidth, all
threads).  Per shape the dense rate is given against the sgemm peak and the
roofline, min(peak, intensity x bandwidth), with the dense kernel's
intensity: 4 n^2 d flops over the bytes it moves per head when K and V are
read once per 256-query tile.  Then where maskkit's dense time goes
(bench_attn split): its two products alone at the kernel's block shape
(256 queries x 512 keys x d, 512 x 64 / d keys past d = 64; the micro-kernels
the kernel runs, on K and V packed per head, or sgemm with
MASKKIT_CPU_KERNEL=blas), its exponentials alone (n^2 per head), and the
rest, memory and other work (kernel - products - exponentials).

Then `maskkit attn` as a whole process (reading Q, K, V, writing O) against
its kernel time in process, the two timed in alternation: wall time, and the
time the command reports, at n = 4096, d = 64 where that shape ran, else at
the first shape.

PyTorch is optional: without it the torch rows are skipped with a message.
It installs in a venv from PyPI (CPU wheels work; about 5 GB with CUDA libs):
    python3 -m venv ~/venv-torch && ~/venv-torch/bin/pip install torch numpy
then run this script with ~/venv-torch/bin/python.
"""
import argparse
import importlib.util
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
SPLIT = re.compile(r"kernel ([\d.]+) s\s+products ([\d.]+) s\s+exps ([\d.]+) s")
QUERY_TILE = 256  # the dense kernel's query tile (src/attn/cpu_tiles.c)
SGEMM_N = 2048


# bench_attn runs as the maskkit program does (src/cli/main.c sets these
# before its kernels run): OpenMP's threads wait passively, OpenBLAS's
# workers sleep soon after a call.  A variable the user set is kept.
BENCH_ENV = dict(os.environ)
BENCH_ENV.setdefault("OMP_WAIT_POLICY", "PASSIVE")
BENCH_ENV.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")


def bench(*args):
    return subprocess.run([BENCH, *(str(a) for a in args)], check=True, capture_output=True,
                          text=True, env=BENCH_ENV).stdout


class Server:
    """bench_attn -s on one shape: one kernel run per call, in seconds."""

    def __init__(self, n, d, heads, expr, tile, qkv):
        self.p = subprocess.Popen([BENCH, "-s", "-i", qkv, *(str(a) for a in (n, d, heads, tile)),
                                   "1", "softmax", expr], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=BENCH_ENV)
        m = re.match(r"density ([\d.]+)", self.p.stdout.readline())
        if not m:
            raise RuntimeError(f"bench_attn -s: no density line (exit {self.p.wait()})")
        self.density = float(m.group(1))

    def run(self, kernel):
        self.p.stdin.write(kernel + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"bench_attn -s: {kernel}: no answer (exit {self.p.wait()})")
        return float(line)

    def close(self):
        self.p.stdin.close()
        if self.p.wait():
            raise RuntimeError(f"bench_attn -s: exit {self.p.returncode}")


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


def machine(threads, torch):
    """The lines that say what ran: CPU, its vector extensions, threads, torch."""
    model, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip() == "model name" and model == "unknown":
                    model = val.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    ext = ["avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"]
    have = " ".join(f"{e} {'yes' if e in flags else 'no'}" for e in ext)
    print(f"CPU: {model}, {os.cpu_count()} CPUs; {have}")
    print(f"threads: {threads}; numpy {np.__version__}; "
          f"torch {torch.__version__ if torch else 'not importable'}")
    if "avx512_bf16" in flags or "amx_bf16" in flags:
        print("bf16: the CPU has bf16 instructions; bf16 is timed after float32")
    else:
        print("bf16: skipped: the CPU has neither AVX512_BF16 nor AMX, so bf16 inputs would "
              "be widened to float32 in software and time nothing but the conversion")


class Bounds:
    """The machine's sgemm peaks and memory read rate: readings taken at the
    start and before every shape, the best of them all (a reading taken
    while something else runs is low, never high)."""

    def __init__(self, torch):
        self.torch, self.sgemm, self.bw, self.a = torch, {}, [], None

    def read(self, reps):
        self.sgemm.setdefault("openblas", []).append(
            float(bench("sgemm", SGEMM_N, reps).split()[-2]))
        if self.torch:
            if self.a is None:
                self.a = self.torch.randn(SGEMM_N, SGEMM_N)
            t = min(timed(lambda: self.a @ self.a.T, reps))
            self.sgemm.setdefault("torch (MKL)", []).append(2 * SGEMM_N ** 3 / t / 1e9)
        self.bw.append(float(bench("bandwidth", 512, reps).split()[-2]))

    def peak(self, name="openblas"):
        return max(self.sgemm[name])

    def bandwidth(self):
        return max(self.bw)

    def say(self, reps, threads):
        count = len(self.bw)
        rates = ", ".join(f"{k} {max(v):.1f} (readings {min(v):.1f} to {max(v):.1f})"
                          for k, v in self.sgemm.items())
        print(f"\nsgemm peak at {SGEMM_N}^3, GFLOP/s, the best of {count} readings of {reps} "
              f"through the run: {rates}")
        print(f"memory read rate, {threads} threads over 512 MiB: {self.bandwidth():.1f} GB/s "
              f"(readings {min(self.bw):.1f} to {max(self.bw):.1f})")


def load_mask_mod(n, expr, tmp):
    """maskkit's closed-form mask_mod for expr at n (gen --format flex-py)."""
    path = os.path.join(tmp, f"mask_mod_{n}.py")
    subprocess.run([MASKKIT, "gen", expr, "--n", str(n), "--format", "flex-py", "-o", path],
                   check=True)
    spec = importlib.util.spec_from_file_location(f"mask_mod_{n}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.make_mask_mod()


class TorchPeers:
    """SDPA dense and masked, and compiled FlexAttention, on one (n, d)."""

    def __init__(self, torch, q, k, v, mask, mask_mod):
        self.torch = torch
        F = torch.nn.functional
        self.q, self.k, self.v = (torch.from_numpy(x) for x in (q, k, v))
        self.mask = torch.from_numpy(mask)
        self.fns = {
            "dense": lambda: F.scaled_dot_product_attention(self.q, self.k, self.v),
            "masked": lambda: F.scaled_dot_product_attention(self.q, self.k, self.v,
                                                             attn_mask=self.mask),
        }
        self.flex_err = None
        try:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            n = mask.shape[0]
            # compiled for the size: what _compile=True did, the way torch now advises
            make_bm = torch.compile(create_block_mask, dynamic=False)
            bm = make_bm(mask_mod, None, None, n, n, device="cpu", BLOCK_SIZE=128)
            flex = torch.compile(flex_attention, dynamic=False)
            self.fns["block"] = lambda: flex(self.q, self.k, self.v, block_mask=bm)
            with torch.inference_mode():  # the same mask both ways: a check, compiled here
                self.flex_err = float((self.fns["block"]() - self.fns["masked"]()).abs().max())
        except Exception as e:  # noqa: BLE001 - any failure only drops the row
            print(f"FlexAttention unavailable on the CPU here: {e}", file=sys.stderr)
            self.fns.pop("block", None)

    def once(self, name):
        with self.torch.inference_mode():
            return seconds(self.fns[name])


def intensity(n, rho, tile):
    """A tiled kernel's flops per byte moved, per head: Q read and O written
    once, the K and V rows of each visited block read once per query tile of
    tile rows; rho is the fraction of the n^2 cells visited.  d cancels."""
    return rho * n / (2.0 * rho * n / tile + 2.0)


def whole_process(n, d, heads, reps, tmp, kernel_s, qkv):
    """`maskkit attn` as a process against its kernel in process (bench_attn
    dense on the same bytes, median of 3), the two timed in alternation, rep
    by rep: timed minutes apart, on a machine whose speed moves, their ratio
    would compare two moments."""
    files = []
    for name, x in zip("qkv", qkv):
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, x)
        files.append(path)
    raw = os.path.join(tmp, "qkv.f32")
    with open(raw, "wb") as f:
        for x in qkv:
            f.write(np.ascontiguousarray(x).tobytes())
    out = os.path.join(tmp, "o.npy")
    walls, reported, inproc = [], [], []
    for _ in range(reps):
        lines = bench("-i", raw, n, d, heads, 64, 3, "softmax", "full", "dense").splitlines()
        inproc.append(next(float(m.group(4)) for m in map(LINE.match, lines) if m))
        t0 = time.perf_counter()
        r = subprocess.run([MASKKIT, "attn", *files, "-o", out, "--backend", "cpu", "--json"],
                           check=True, capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        reported.append(json.loads(r.stdout)["seconds"])
    io_bytes = 4 * heads * n * d * 4
    kernel = statistics.median(inproc)
    print(f"\nmaskkit attn, whole process, n={n} d={d} heads={heads} (reps {reps}, each beside a")
    print("run of the kernel in process):")
    print(f"  in-process kernel (bench_attn dense)  {kernel:.4f} s  (the table's: {kernel_s:.4f} s)")
    print(f"  reported by the command               {statistics.median(reported):.4f} s"
          f"  ({statistics.median(reported) / kernel:.2f}x)")
    print(f"  whole process (wall)                  {statistics.median(walls):.4f} s"
          f"  ({statistics.median(walls) / kernel:.2f}x; Q, K, V and O are "
          f"{io_bytes / 2**20:.0f} MiB)")
    whole = statistics.median(w / k for w, k in zip(walls, reported))
    print(f"  whole process over the kernel it reports, run by run: {whole:.2f}x (median)")


def run_shape(args, torch, n, d, mask, mask_mod, tmp):
    """One (n, d): the timings of every kernel and peer, and the split."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((1, args.heads, n, d), dtype=np.float32) for _ in range(3))
    qkv = os.path.join(tmp, "qkv.f32")
    with open(qkv, "wb") as f:
        for x in (q, k, v):
            f.write(np.ascontiguousarray(x).tobytes())
    peers = TorchPeers(torch, q, k, v, mask, mask_mod) if torch else None
    srv = Server(n, d, args.heads, args.mask, args.tile, qkv)
    kernels = ("dense", "masked", "block")
    mine, theirs, pairs, numpy_t = {}, {}, {}, []
    for name in kernels:  # the warm-up of both sides
        srv.run(name)
        if peers and name in peers.fns:
            peers.once(name)
    for r in range(args.rounds):
        for rep in range(args.reps):
            for name in kernels:
                peer = peers and name in peers.fns
                first = (rep + r) % 2 == 0 or not peer  # the order swaps pair by pair
                time.sleep(0.005)  # the other side's threads go to sleep
                t = srv.run(name) if first else peers.once(name)
                time.sleep(0.005)
                u = peers.once(name) if first and peer else srv.run(name) if peer else None
                mt, pt = (t, u) if first else (u, t)
                mine.setdefault(name, []).append(mt)
                if peer:
                    theirs.setdefault(name, []).append(pt)
                    pairs.setdefault(name, []).append(mt / pt)
        if n <= 4096:
            numpy_t.extend(timed(lambda: numpy_attention(q, k, v), max(1, args.reps // 3)))
    srv.close()
    density = srv.density
    m = SPLIT.search(bench("-i", qkv, "split", n, d, args.heads, args.reps))
    split = tuple(float(x) for x in m.groups())
    med = {name: statistics.median(ts) for name, ts in mine.items()}
    peer = {name: statistics.median(ts) for name, ts in theirs.items()}
    if numpy_t:
        peer["numpy"] = statistics.median(numpy_t)
    quart = {name: statistics.quantiles(rs, n=4)[::2] for name, rs in pairs.items()
             if len(rs) > 1}
    return {"n": n, "d": d, "mine": med, "peer": peer, "split": split, "qkv": (q, k, v),
            "density": density, "quartiles": quart, "flex_err": peers.flex_err if peers else None}


PEER_NAME = {"dense": "SDPA", "masked": "SDPA+mask", "block": "FlexAttention",
             "numpy": "numpy dense"}


def print_times(args, shapes, peak, bw):
    print(f"\nfloat32, [1, {args.heads}, n, d], {args.threads} threads, mask "
          f"'{args.mask}' (masked, block), medians of {args.rounds * args.reps} runs, each "
          "paired with a run of its peer")
    print("columns: maskkit s and peer s, the medians; ratio = maskkit s / peer s (below 1: "
          "maskkit faster);\n  pairs = the quartiles of the pairs' own ratios; GFLOP/s = the work maskkit's kernel does over its time: 4 heads "
          "n^2 d for dense and masked\n  (masked visits every block), that times the tile "
          f"density (--tile {args.tile}) for block;\n  of sgemm = GFLOP/s over the OpenBLAS "
          f"sgemm peak ({peak:.1f}); of roof = over the roofline,\n  min(peak, intensity x "
          f"{bw:.1f} GB/s), intensity as in the split below ({QUERY_TILE}-query tiles for "
          f"dense and masked, {args.tile} for block)")
    print(f"{'n':>5} {'d':>4} {'kernel':<7} {'maskkit s':>10} {'peer':<13} {'peer s':>10} "
          f"{'ratio':>6} {'pairs':>11} {'GFLOP/s':>8} {'of sgemm':>8} {'of roof':>8}")
    for s in shapes:
        n, d = s["n"], s["d"]
        for name in ("dense", "masked", "block", "numpy"):
            if name not in s["peer"] and name == "numpy":
                continue
            kname = "dense" if name == "numpy" else name
            rho, tile = (s["density"], args.tile) if kname == "block" else (1.0, QUERY_TILE)
            m, p = s["mine"][kname], s["peer"].get(name)
            gf = 4.0 * args.heads * n * n * d * rho / m / 1e9
            roof = min(peak, intensity(n, rho, tile) * bw)
            ratio = f"{m / p:6.2f}" if p else "     -"
            ps = f"{p:10.4f}" if p else "         -"
            qs = s["quartiles"].get(name) if name != "numpy" else None
            qs = f"{qs[0]:.2f}-{qs[1]:.2f}" if qs else "-"
            print(f"{n:5d} {d:4d} {kname:<7} {m:10.4f} {PEER_NAME[name]:<13} {ps} {ratio} "
                  f"{qs:>11} {gf:8.1f} {gf / peak:8.0%} {gf / roof:8.0%}")
    errs = [f"n={s['n']} d={s['d']} {s['flex_err']:.2g}" for s in shapes
            if s["flex_err"] is not None]
    if errs:
        print("FlexAttention (maskkit's mask_mod) vs SDPA (maskkit's boolean mask), largest "
              "difference: " + ", ".join(errs))


def print_split(args, shapes, peak, bw):
    print(f"\nwhere maskkit's dense time goes (bench_attn split, medians of {args.reps}, "
          "the three timed in turn):")
    print("columns: kernel = the dense kernel in process; products = its two products alone "
          f"(its micro-kernels) at its block shape\n  ({QUERY_TILE} queries x 512 keys x d, "
          "fewer keys past d = 64; Q K^T and P V over every block and head), with their "
          "GFLOP/s\n  and that over the sgemm peak; exps = its "
          "exponentials alone (n^2 per head); other = kernel - products\n  - exps: memory "
          "traffic, row statistics, rescaling, threads; intensity = flops per byte moved\n  "
          f"(Q read and O written once, K and V once per {QUERY_TILE}-query tile); roof = "
          f"min(peak, intensity x bandwidth), GFLOP/s")
    print(f"{'n':>5} {'d':>4} {'kernel s':>9} {'products s':>16} {'GFLOP/s':>8} {'of sgemm':>8} "
          f"{'exps s':>14} {'other s':>15} {'intensity':>9} {'roof':>7}")
    for s in shapes:
        n, d = s["n"], s["d"]
        k, p, e = s["split"]
        o = k - p - e
        gf = 4.0 * args.heads * n * n * d / p / 1e9
        ai = intensity(n, 1.0, QUERY_TILE)
        print(f"{n:5d} {d:4d} {k:9.4f} {p:9.4f} ({p / k:4.0%}) {gf:8.1f} {gf / peak:8.0%} "
              f"{e:7.4f} ({e / k:4.0%}) {o:8.4f} ({o / k:4.0%}) {ai:9.1f} "
              f"{min(peak, ai * bw):7.1f}")
    if any(s["split"][0] < s["split"][1] + s["split"][2] for s in shapes):
        print("other < 0: the kernel ran faster than its products timed alone "
              "(bench_products_block\n  in bench/bench_attn.c): the readings' noise, "
              "or the kernel's cache reuse across its strips")


def bf16_section(args, torch, shapes, tmp):
    """maskkit's kernels with --dtype bf16 (Q, K, V and P rounded to bf16, sums
    in float32: AMX or AVX512_BF16) against their float32 times and against
    SDPA on the same inputs in torch.bfloat16, interleaved by rounds."""
    r = subprocess.run([BENCH, "-t", "bf16", "64", "64", "1", "64", "1", "softmax", "full",
                        "dense"], capture_output=True, text=True, env=BENCH_ENV)
    if r.returncode != 0:
        print(f"\nbf16: skipped: {r.stderr.strip()}")
        return
    print(f"\nbf16 (Q, K, V and the weights rounded to bf16, float32 sums), [1, {args.heads}, "
          f"n, d], {args.threads} threads, medians of {args.rounds} rounds x {args.reps}")
    print("columns: maskkit bf16 s; over its float32 time above; SDPA in torch.bfloat16 s "
          "(dense only); ratio = maskkit bf16 s / SDPA bf16 s")
    print(f"{'n':>5} {'d':>4} {'kernel':<7} {'bf16 s':>9} {'/ fp32':>7} {'SDPA bf16 s':>12} "
          f"{'ratio':>6}")
    qkv = os.path.join(tmp, "qkv.f32")
    for s in shapes:
        q, k, v = s["qkv"]
        with open(qkv, "wb") as f:
            for x in (q, k, v):
                f.write(np.ascontiguousarray(x).tobytes())
        mine, sdpa = {}, []
        if torch:
            qt, kt, vt = (torch.from_numpy(x).to(torch.bfloat16) for x in (q, k, v))
            sdpa_fn = lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt)
        for _ in range(args.rounds):
            out = bench("-t", "bf16", "-i", qkv, s["n"], s["d"], args.heads, args.tile,
                        args.reps, "softmax", args.mask, "dense", "masked", "block")
            for line in out.splitlines():
                m = LINE.match(line)
                if m:
                    mine.setdefault(m.group(1), []).append(float(m.group(4)))
            if torch:
                sdpa.extend(timed(sdpa_fn, args.reps))
        peer = statistics.median(sdpa) if sdpa else None
        for name in ("dense", "masked", "block"):
            t = statistics.median(mine[name])
            tail = (f"{peer:12.4f} {t / peer:6.2f}" if name == "dense" and peer
                    else f"{'':>12} {'':>6}")
            print(f"{s['n']:5d} {s['d']:4d} {name:<7} {t:9.4f} {t / s['mine'][name]:7.2f} "
                  f"{tail}")


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
    BENCH_ENV.setdefault("OMP_NUM_THREADS", os.environ["OMP_NUM_THREADS"])
    torch = load_torch(args.threads)
    machine(args.threads, torch)
    bounds, breps = Bounds(torch), max(args.reps, 5)
    bounds.read(breps)
    shapes = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.n.split(",")):
            mpath = os.path.join(tmp, "m.npy")
            subprocess.run([MASKKIT, "gen", args.mask, "--n", str(n), "-o", mpath], check=True)
            mask = np.load(mpath)
            mask_mod = load_mask_mod(n, args.mask, tmp) if torch else None
            for d in (int(x) for x in args.d.split(",")):
                bounds.read(breps)
                shapes.append(run_shape(args, torch, n, d, mask, mask_mod, tmp))
        bounds.say(breps, args.threads)
        print_times(args, shapes, bounds.peak(), bounds.bandwidth())
        print_split(args, shapes, bounds.peak(), bounds.bandwidth())
        bf16_section(args, torch, shapes, tmp)
        if not args.no_whole and shapes:
            # the acceptance shape where it ran: whole <= 1.10 x kernel
            s = next((s for s in shapes if (s["n"], s["d"]) == (4096, 64)), shapes[0])
            whole_process(s["n"], s["d"], args.heads, args.reps, tmp, s["mine"]["dense"],
                          s["qkv"])


if __name__ == "__main__":
    main()
