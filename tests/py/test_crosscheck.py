#!/usr/bin/env python3
"""Cross-checks maskkit's files against masks built independently with numpy
from the written definitions (i = query, j = key, d = |i - j|), and its HDF5,
JSON and PNG outputs against h5py, json and the PNG format itself."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import h5py
import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]


def run(*args):
    return subprocess.run([MASKKIT, *args], check=True, capture_output=True, text=True).stdout


def grid(n):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    return i, j, np.abs(i - j)


def pow2(d):
    return (d > 0) & ((d & (d - 1)) == 0)


def reference(name, n):
    i, j, d = grid(n)
    first = lambda k: (i < k) | (j < k)  # rows and columns of the first k tokens
    return {
        "full": np.ones((n, n), bool),
        "none": np.zeros((n, n), bool),
        "diag": i == j,
        "causal": j <= i,
        "local2": d <= 2,
        "local(w=5)": d <= 5,
        "diagonal(offsets=0,1,4)": (d == 0) | (d == 1) | (d == 4),
        "global2": first(2) | np.zeros((n, n), bool),
        "global(tokens=1,5)": np.isin(i, [1, 5]) | np.isin(j, [1, 5]),
        "axis(rows=0,cols=0,7)": (i == 0) | (j == 0) | (j == 7),
        "star": (d <= 1) | (i == 0) | (j == 0),
        "logsparse": (d == 0) | pow2(d),
        "logsparse(causal=1)": ((d == 0) | pow2(d)) & (j <= i),
        "strided": (d < 4) | (d % 4 == 0),
        "strided(l=3,causal=1)": ((d < 3) | (d % 3 == 0)) & (j <= i),
        "fixed": (i // 4 == j // 4) | (j % 4 >= 3),
        "fixed(l=8,c=2,causal=1)": ((i // 8 == j // 8) | (j % 8 >= 6)) & (j <= i),
        "longformer(w=2,tokens=0,9)": (d <= 2) | np.isin(i, [0, 9]) | np.isin(j, [0, 9]),
        "strided-diag": ((d < 4) | (d % 4 == 0)) & (i != j),
        "(local3+global1)&causal": ((d <= 3) | first(1)) & (j <= i),
        "local1+global1&causal": (d <= 1) | (first(1) & (j <= i)),
    }[name]


def blocked(base, n, b):
    """A pattern on the grid of b x b blocks, each block expanded (the last partial)."""
    nb = -(-n // b)
    g = base(nb)
    return np.kron(g, np.ones((b, b), bool))[:n, :n]


def load_npy(expr, n, tmp, extra=()):
    path = os.path.join(tmp, "m.npy")
    run("gen", expr, "--n", str(n), "-o", path, *extra)
    m = np.load(path)
    check(m.dtype == np.bool_ and m.shape == (n, n), f"{expr}: dtype/shape {m.dtype} {m.shape}")
    return m


def test_deterministic_patterns(tmp):
    names = ["full", "none", "diag", "causal", "local2", "local(w=5)", "diagonal(offsets=0,1,4)",
             "global2", "global(tokens=1,5)", "axis(rows=0,cols=0,7)", "star", "logsparse",
             "logsparse(causal=1)", "strided", "strided(l=3,causal=1)", "fixed",
             "fixed(l=8,c=2,causal=1)", "longformer(w=2,tokens=0,9)", "strided-diag",
             "(local3+global1)&causal", "local1+global1&causal"]
    for n in (10, 16, 37, 128):
        for name in names:
            m = load_npy(name, n, tmp)
            ref = reference(name, n)
            check(np.array_equal(m, ref), f"{name} n={n}: {int((m != ref).sum())} cells differ")


def test_block_layouts(tmp):
    for n, b in ((37, 4), (64, 16), (100, 32)):
        m = load_npy(f"local(w=1,block={b})", n, tmp)
        check(np.array_equal(m, blocked(lambda k: grid(k)[2] <= 1, n, b)), f"local1 block={b} n={n}")
        m = load_npy(f"causal(block={b})", n, tmp)
        check(np.array_equal(m, blocked(lambda k: grid(k)[1] <= grid(k)[0], n, b)),
              f"causal block={b} n={n}")
    # runs of blocks that cross 64-bit words of the block grid
    for n, b, w in ((300, 2, 40), (1001, 3, 70)):
        m = load_npy(f"local(w={w},block={b})-fixed(l=50,block={b})", n, tmp)
        ref = blocked(lambda k: grid(k)[2] <= w, n, b) & ~blocked(
            lambda k: (grid(k)[0] // 50 == grid(k)[1] // 50) | (grid(k)[1] % 50 >= 49), n, b)
        check(np.array_equal(m, ref), f"block runs across words n={n} B={b}")


M64 = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


class Xoshiro256ss:
    """xoshiro256** (Blackman & Vigna), seeded as maskkit documents: splitmix64
    steps over (seed, stream, row)."""

    def __init__(self, seed, tag, index):
        _, z = splitmix64(seed)
        _, z = splitmix64(z ^ tag)
        sm = z ^ index
        self.s = []
        for _ in range(4):
            sm, z = splitmix64(sm)
            self.s.append(z)

    def next(self):
        s = self.s
        rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
        result = (rotl((s[1] * 5) & M64, 7) * 9) & M64
        t = (s[1] << 17) & M64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def below(self, bound):  # Lemire's multiply-and-reject
        m = self.next() * bound
        if (m & M64) < bound:
            threshold = (-bound) % bound
            while (m & M64) < threshold:
                m = self.next() * bound
        return m >> 64


def floyd_row(seed, row, k, n):
    """2K keys of random(size=K) row `row`: Floyd's algorithm on stream 1."""
    if k >= n:
        return set(range(n))
    r, chosen = Xoshiro256ss(seed, 1, row), set()
    for j in range(n - k, n):
        x = r.below(j + 1)
        chosen.add(j if x in chosen else x)
    return chosen


def test_random_generator_is_pinned(tmp):
    """The same seed gives the same mask on every machine: maskkit's random rows
    against an independent Python implementation of the documented generator."""
    for seed, k, n in ((0, 1, 64), (12345, 3, 100), (2 ** 62, 2, 37)):
        m = load_npy(f"random(size={k},seed={seed})", n, tmp)
        for i in range(n):
            want = floyd_row(seed, i, 2 * k, n)
            if set(np.where(m[i])[0]) != want:
                check(False, f"random(size={k},seed={seed}) n={n}: row {i} differs")
                break
        else:
            check(True, "")


def test_random_patterns(tmp):
    n = 128
    for k in (1, 3):
        m = load_npy(f"random{k}", n, tmp)
        check(np.all(m.sum(axis=1) == 2 * k), f"random{k}: 2K keys per row")
        check(np.array_equal(m, load_npy(f"random{k}", n, tmp)), f"random{k}: reproducible")
        check(not np.array_equal(m, load_npy(f"random{k}", n, tmp, ("--seed", "7"))),
              f"random{k}: seed matters")
    bb = load_npy("bigbird", n, tmp)
    i, j, d = grid(n)
    check(np.all(bb[(d <= 1) | (i < 2) | (j < 2)]), "bigbird contains local1 + global2")
    extra = bb & ~((d <= 1) | (i < 2) | (j < 2))
    check(np.all(extra.sum(axis=1) <= 2), "bigbird: at most r = 2 random keys beyond the rest")
    lf = load_npy("longformer", n, tmp)
    full_rows = np.where(lf.all(axis=1))[0]
    check(len(full_rows) == 2 and np.array_equal(lf[:, full_rows].all(axis=0), [True, True]),
          "longformer: g = 2 global tokens with full rows and columns")


def test_npy_count_matches_measure(tmp):
    for expr in ("bigbird", "local2+global1+random1", "fixed"):
        m = load_npy(expr, 128, tmp)
        meas = json.loads(run("measure", expr, "--n", "128", "--json"))
        check(int(m.sum()) == meas["count"], f"{expr}: npy count {m.sum()} vs measure {meas['count']}")
        rho = 1 - m.sum() / 128 ** 2
        check(abs(rho - meas["sparsity"]) < 1e-12, f"{expr}: sparsity")
        nodiag = 1 - (m.sum() - np.trace(m)) / 128 ** 2
        check(abs(nodiag - meas["sparsity_nodiag"]) < 1e-12, f"{expr}: sparsity without diagonal")
        check(meas["symmetric"] == bool(np.array_equal(m, m.T)), f"{expr}: symmetric flag")
        check(meas["causal"] == bool(not np.triu(m, 1).any()), f"{expr}: causal flag")
        check(meas["toeplitz"] == bool(np.array_equal(m[1:, 1:], m[:-1, :-1])), f"{expr}: toeplitz flag")
        for t in meas["tiles"]:
            b = t["block"]
            nb = -(-128 // b)
            tiles = np.pad(m, (0, nb * b - 128)).reshape(nb, b, nb, b).any(axis=(1, 3))
            check(int(tiles.sum()) == t["nonempty"], f"{expr}: non-empty tiles at {b}")


def test_h5_and_json(tmp):
    h5 = os.path.join(tmp, "m.h5")
    js = os.path.join(tmp, "m.json")
    run("gen", "bigbird", "--n", "64", "--seed", "5", "-o", h5)
    run("gen", "bigbird", "--n", "64", "--seed", "5", "-o", js)
    ref = load_npy("bigbird", 64, tmp, ("--seed", "5"))
    with h5py.File(h5, "r") as f:
        ds = f["mask"]
        check(ds.dtype == np.uint8 and ds.shape == (64, 64), "h5 dataset 'mask' is uint8 n x n")
        check(np.array_equal(ds[()] != 0, ref), "h5 mask equals the npy mask")
        check(ds.attrs["expr"] in ("bigbird", b"bigbird"), f"h5 expr attribute {ds.attrs['expr']!r}")
        check(int(ds.attrs["seed"]) == 5, "h5 seed attribute")
        check(abs(float(ds.attrs["sparsity"]) - (1 - ref.sum() / 64 ** 2)) < 1e-12, "h5 sparsity attribute")
    with open(js) as f:
        d = json.load(f)
    rows = np.zeros((64, 64), bool)
    for i, cols in enumerate(d["rows"]):
        rows[i, cols] = True
    check(d["n"] == 64 and np.array_equal(rows, ref), "json rows equal the npy mask")
    # and maskkit reads back what h5py and numpy write
    alt = os.path.join(tmp, "alt.h5")
    with h5py.File(alt, "w") as f:
        f.create_dataset("weights/some_mask", data=(ref.T).astype(np.int32))
    np.save(os.path.join(tmp, "alt.npy"), ref.T.astype(np.float32))
    for p in (alt, os.path.join(tmp, "alt.npy")):
        meas = json.loads(run("measure", p, "--json"))
        check(meas["n"] == 64 and meas["count"] == int(ref.sum()), f"reads {os.path.basename(p)} written by numpy/h5py")
    run("compose", alt, js, "--op", "minus", "-o", os.path.join(tmp, "diff.npy"))
    diff = np.load(os.path.join(tmp, "diff.npy"))
    check(np.array_equal(diff, ref.T & ~ref), "compose h5py file minus json file")


def png_size(path):
    with open(path, "rb") as f:
        data = f.read()
    check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: PNG signature")
    length, kind = struct.unpack(">I4s", data[8:16])
    w, h = struct.unpack(">II", data[16:24])
    check(kind == b"IHDR" and zlib.crc32(data[12:16 + length]) == struct.unpack(">I", data[16 + length:20 + length])[0],
          f"{path}: IHDR chunk and CRC")
    return w, h


def test_png(tmp):
    for n, side in ((8, 128), (128, 512), (3000, 1000)):
        p = os.path.join(tmp, f"m{n}.png")
        run("gen", "bigbird", "--n", str(n), "-o", p)
        check(png_size(p) == (side, side), f"png n={n}: {png_size(p)} expected {side}")


def test_blocks_like_flexattention(tmp):
    """The blocks file against FlexAttention's rule: pad the mask with False to
    whole blocks, sum each tile; full = B*B, partial = between; kv lists partial."""
    for expr, n, b in (("causal", 100, 16), ("bigbird", 128, 32), ("local3+global1", 70, 8),
                       ("fixed(l=16)", 64, 16)):
        m = load_npy(expr, n, tmp)
        out = os.path.join(tmp, "b.json")
        run("gen", expr, "--n", str(n), "--format", "blocks", "--block", str(b), "-o", out)
        with open(out) as f:
            d = json.load(f)
        nb = -(-n // b)
        sums = np.pad(m, (0, nb * b - n)).reshape(nb, b, nb, b).sum(axis=(1, 3))
        full = [list(np.where(r == b * b)[0]) for r in sums]
        part = [list(np.where((r > 0) & (r < b * b))[0]) for r in sums]
        check(d["num_blocks"] == nb and d["full_kv_indices"] == full and d["kv_indices"] == part
              and d["kv_num_blocks"] == [len(x) for x in part]
              and d["full_kv_num_blocks"] == [len(x) for x in full], f"blocks {expr} n={n} B={b}")


def measure_count(expr, n):
    return json.loads(run("measure", expr, "--n", str(n), "--json", "--tile", "64"))["count"]


def test_library_conventions(tmp):
    """Other libraries' rules, transliterated from their sources (see the README's
    table and docs/conventions.md), against the maskkit expression claimed to
    reproduce them; and the closed-form counts behind the table."""
    for n in (1, 7, 33, 100):
        i, j, d = grid(n)
        for W in (1, 3, 9):  # xformers local_1d_pattern(n, W): |i-j| < W//2 + 1, W odd
            check(np.array_equal(load_npy(f"local(w={(W - 1) // 2})", n, tmp), d < W // 2 + 1),
                  f"xformers local_1d_pattern W={W} n={n}")
        for W in (1, 4, 16):  # HF sliding_window=W: kv > q - W, causal (W keys with self)
            m = load_npy(f"local(w={W - 1})&causal", n, tmp)
            check(np.array_equal(m, (j > i - W) & (j <= i)), f"HF sliding window W={W} n={n}")
            # attention-gym generate_sliding_window(W): q - kv <= W, causal (W+1 keys)
            m = load_npy(f"local(w={W})&causal", n, tmp)
            check(np.array_equal(m, (i - j <= W) & (i >= j)), f"attention-gym sliding window W={W} n={n}")
        for wl, wr in ((0, 2), (3, 1)):  # flash-attn window_size=(wl, wr), xformers bottom-right local
            m = load_npy(f"(local(w={wl})&causal)+(local(w={wr})-causal)", n, tmp)
            check(np.array_equal(m, (j - i >= -wl) & (j - i <= wr)), f"flash-attn window ({wl},{wr}) n={n}")
        for P in (1, 4):  # attention-gym prefix LM: kv < P or q >= kv
            m = load_npy(f"causal+axis(cols={','.join(str(k) for k in range(min(P, n)))})", n, tmp)
            check(np.array_equal(m, (j < P) | (i >= j)), f"prefix LM P={P} n={n}")
    # closed forms (m = min(w, n - 1)); several n, including n <= w
    for n in (1, 2, 5, 16, 100, 1000):
        for w in (0, 1, 2, 7):
            m = min(w, n - 1)
            check(measure_count(f"local{w}", n) == n * (2 * m + 1) - m * (m + 1), f"local{w} count n={n}")
            check(measure_count(f"local{w}&causal", n) == (m + 1) * n - m * (m + 1) // 2,
                  f"local{w}&causal count n={n}")
        check(measure_count("causal", n) == n * (n + 1) // 2, f"causal count n={n}")
        for g in (1, 3):
            gg = min(g, n)
            check(measure_count(f"global{g}", n) == gg * (2 * n - gg), f"global{g} count n={n}")
        if n >= 3:
            check(measure_count("star", n) == 5 * n - 6, f"star count n={n}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_deterministic_patterns, test_block_layouts, test_random_patterns,
                     test_random_generator_is_pinned,
                     test_npy_count_matches_measure, test_h5_and_json, test_png,
                     test_library_conventions, test_blocks_like_flexattention):
            test(tmp)
    return checks.summary("crosscheck")


if __name__ == "__main__":
    sys.exit(main())
