#!/usr/bin/env python3
"""Mask.block_mask() against FlexAttention's create_block_mask, in one run.

    MASKKIT_LIB=build/.libs/libmaskkit.so PYTHONPATH=python \\
        ~/.cache/maskkit/torch-venv/bin/python bench/flex_block_mask.py
        [--n 16384,65536] [--block 128] [--reps 3] [--rounds 2] [--budget 60] [--eager-max 16384]
        [--exprs '(local128+global4)&causal;bigbird(w=64,r=3,g=2)'] [--quick]

For each size n and expression (default: (local128+global4)&causal, a
document mask of eight ragged documents filling 95 % of n, bigbird), a
BlockMask at --block, B = H = 1, on the CPU, three ways:
  * maskkit: maskkit.mask(EXPR, n=n).block_mask(block), from the expression
    (a fresh Mask each time: a Mask keeps the cells it generated);
  * eager: create_block_mask(mm, None, None, n, n, device="cpu",
    BLOCK_SIZE=block) over mm = the same Mask's mask_mod();
  * compiled: torch.compile(create_block_mask) over the same mask_mod (what
    create_block_mask(..., _compile=True) does; the flag is deprecated); its
    first call, which compiles, is reported apart ("first").
Each measurement runs in a fresh process (the torch venv's Python): a
warm-up call, then --reps timed calls (fewer when they would take more than
--budget seconds, at least one: eager create_block_mask takes 15 s a call at
n = 16384 on two cores); peak memory is that process's
resource.getrusage maxrss after the calls, less its maxrss before the first
(torch and maskkit imported, inputs made), so the import is not counted.
The rounds alternate the order of the three (--rounds), so a disturbance of
the machine falls on each; the table gives medians over every round's calls
and the ratios peer / maskkit (above 1: maskkit faster).  Each torch process
also checks its layout against maskkit's (the four arrays, padding
included: "agree").  Eager create_block_mask holds the n x n mask (and the
index tensors beside it): above --eager-max it is skipped.  --quick: n =
2048,4096, 2 reps, 1 round.
"""
import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time

METHODS = ("maskkit", "eager", "compiled")
LAYOUT = ("kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices")


def document(n):
    """Eight ragged documents over 95 % of n, then padding."""
    parts = (3, 1, 4, 1, 5, 9, 2, 6)
    lengths = [max(1, int(0.95 * n * p / sum(parts))) for p in parts]
    return "document(lengths=%s,causal=1)" % ",".join(map(str, lengths))


def maxrss():
    """This process's peak resident size in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def child(method, expr, n, block, reps, budget):
    """One measurement, in this (fresh) process: prints a JSON line."""
    import torch
    from torch.nn.attention.flex_attention import create_block_mask

    import maskkit
    torch.set_num_threads(os.cpu_count() or 1)
    mm = maskkit.mask(expr, n=n).mask_mod()
    if method == "maskkit":
        def build():
            return maskkit.mask(expr, n=n).block_mask(block)
    else:
        fn = create_block_mask if method == "eager" else torch.compile(create_block_mask)

        def build():
            return fn(mm, None, None, n, n, device="cpu", BLOCK_SIZE=block)
    base = maxrss()
    t0 = time.perf_counter()
    bm = build()
    first = time.perf_counter() - t0
    times = []
    # slow builds (eager at 16k takes 15 s a call) get fewer calls: about a minute each
    for _ in range(min(reps, max(1, int(budget / max(first, 1e-9))))):
        t0 = time.perf_counter()
        bm = build()
        times.append(time.perf_counter() - t0)
    peak = maxrss()
    agree = None
    if method != "maskkit":
        ours = maskkit.mask(expr, n=n).block_mask(block)
        agree = all(torch.equal(getattr(bm, k), getattr(ours, k).to(getattr(bm, k).dtype))
                    for k in LAYOUT)
    print(json.dumps({"first": first, "times": times, "mem": peak - base, "agree": agree}))


def measure(method, expr, n, block, reps, budget):
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", method, expr,
                        str(n), str(block), str(reps), str(budget)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["no message"])[-1]
        return {"error": "%s n=%d %s: exit %d: %s" % (method, n, expr, p.returncode, tail)}
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt_s(x):
    return "-" if x is None else "%.3g" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="16384,65536")
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--eager-max", type=int, default=16384)
    ap.add_argument("--exprs", default=None, help="';'-separated (default: see above)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget", type=float, default=60,
                    help="seconds of timed calls a measurement aims at (at least one call)")
    ap.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        method, expr, n, block, reps, budget = args.child
        child(method, expr, int(n), int(block), int(reps), float(budget))
        return 0
    if args.quick:
        args.n, args.reps, args.rounds = "2048,4096", 2, 1
    if importlib.util.find_spec("torch") is None:  # the children import it
        print("torch is not importable: run this with the torch venv's Python "
              "(sh tests/py/torch-venv.sh; ~/.cache/maskkit/torch-venv/bin/python)",
              file=sys.stderr)
        return 0
    sizes = [int(s) for s in args.n.split(",")]
    rows = []
    for n in sizes:
        exprs = (args.exprs.split(";") if args.exprs else
                 ["(local128+global4)&causal", document(n), "bigbird(w=64,r=3,g=2)"])
        for expr in exprs:
            got = {m: {"first": [], "times": [], "mem": [], "agree": []} for m in METHODS}
            methods = [m for m in METHODS if m != "eager" or n <= args.eager_max]
            for r in range(args.rounds):
                for method in (methods if r % 2 == 0 else methods[::-1]):
                    res = measure(method, expr, n, args.block, args.reps, args.budget)
                    if "error" in res:
                        # said once under the table; the cell says "failed"
                        print(res["error"], file=sys.stderr)
                        got[method]["failed"] = res["error"]
                        continue
                    for k in ("times", ):
                        got[method][k] += res[k]
                    for k in ("first", "mem", "agree"):
                        got[method][k].append(res[k])
            rows.append((n, expr, got))
            print_row(n, expr, got, sys.stderr)
    print("Mask.block_mask() vs create_block_mask, block %d, CPU (%d cores), medians of "
          "%d rounds x up to %d calls (about %g s each) after a warm-up; peak = maxrss growth "
          "of a fresh process" % (args.block, os.cpu_count() or 1, args.rounds, args.reps,
                                 args.budget))
    print("| n | expression | maskkit s | eager s | compiled s (first call) | eager / maskkit "
          "| compiled / maskkit | peak MiB maskkit / eager / compiled | agree |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, expr, got in rows:
        print_row(n, expr, got, sys.stdout)
    for n, expr, got in rows:
        for m in METHODS:
            if "failed" in got[m]:
                print("failed: " + got[m]["failed"])
    return 0


def print_row(n, expr, got, out):
    med = {m: statistics.median(g["times"]) if g["times"] else None for m, g in got.items()}
    cell = {m: "failed" if "failed" in got[m] and med[m] is None else fmt_s(med[m])
            for m in METHODS}
    first = statistics.median(got["compiled"]["first"]) if got["compiled"]["first"] else None
    mem = {m: "%.0f" % (max(g["mem"]) / 2**20) if g["mem"] else "-" for m, g in got.items()}

    def ratio(m):
        if med[m] is None or not med["maskkit"]:
            return "-"
        return "%.3g" % (med[m] / med["maskkit"])
    agree = [a for m in ("eager", "compiled") for a in got[m]["agree"]]
    short = expr if len(expr) <= 40 else expr[:37] + "..."
    print("| %d | `%s` | %s | %s | %s (%s) | %s | %s | %s / %s / %s | %s |" % (
        n, short, cell["maskkit"], cell["eager"], cell["compiled"],
        fmt_s(first), ratio("eager"), ratio("compiled"), mem["maskkit"], mem["eager"],
        mem["compiled"], "yes" if agree and all(agree) else ("-" if not agree else "NO")),
        file=out, flush=True)


if __name__ == "__main__":
    sys.exit(main())
