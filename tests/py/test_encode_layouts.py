#!/usr/bin/env python3
"""maskkit encode's layouts and dtypes read alike.  On a small encode (the
real all-MiniLM-L6-v2 over the first 12 sentences of GPL-3 when it is there,
else the tiny BERT of tests/cli/fixtures/make_encoder.py), written padded and
ragged, in float32 and float16:
- h5py: every ragged block (/attn [layers, T] from /offsets) equals the
  padded file's len x len block, and the ragged q, k ([tokens, heads, dk])
  the padded ones' real rows; the offsets are the lengths' heads len^2
  added up; the float16 files hold numpy's float16() of the float32 ones
  (round to nearest even), bit for bit; --qk-limit keeps that many samples.
- every reader (measure, attn-stats, attn-derive, then prune and axis on
  attn-derive's outputs, explain --sample) prints the same JSON for the
  padded and the ragged file of one dtype, but for the fields naming the
  input file and the seconds taken; attn-stats under mpirun (2 ranks) too,
  when maskkit is built with MPI.
- float16 against float32: the largest difference of the readers' numbers
  is printed (no exactness is claimed; it is checked against loose bounds).
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check

MASKKIT = os.environ["MASKKIT"]
SRCDIR = os.environ.get("SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.expanduser("~/.cache/maskkit/all-MiniLM-L6-v2")
TEXT = "/usr/share/common-licenses/GPL-3"
VOLATILE = {"input", "file", "data", "seconds", "output"}


def run(*args, mpi=0):
    cmd = [MASKKIT, *args]
    env = None
    if mpi:
        cmd = [os.environ["MPIRUN"], "-n", str(mpi), "--oversubscribe", *cmd]
        if os.environ.get("ASAN_OPTIONS"):
            # Open MPI's leaks are suppressed by library (tests/mpi/lsan.supp), which
            # only the slow unwinder can see through its unloaded plugins (as
            # tests/mpi/run.sh does)
            env = dict(os.environ,
                       ASAN_OPTIONS=os.environ["ASAN_OPTIONS"] + ":fast_unwind_on_malloc=0")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def strip(x):
    """The JSON without the fields that name files or time."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def numbers(x, path=""):
    """(path, value) of every number in the JSON."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from numbers(v, f"{path}/{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from numbers(v, f"{path}[{i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, float(x)


def encode(model, text, out, *extra):
    run("encode", model, "--text", text, "--sentences", "--quiet", "-o", out, *extra)


def check_blocks(padded, ragged, what):
    with h5py.File(padded, "r") as p, h5py.File(ragged, "r") as r:
        n, off, a = p["lengths"][()], r["offsets"][()], r["attn"]
        heads = int(a.attrs["heads"])
        check(a.attrs["layout"] == "ragged" and int(a.attrs["n"]) == p["attn"].shape[-1],
              f"{what}: the ragged attributes {dict(a.attrs)}")
        check(off[0] == 0 and np.array_equal(np.diff(off), heads * n * n),
              f"{what}: offsets are the sums of heads len^2")
        check(a.shape == (p["attn"].shape[1], off[-1]), f"{what}: /attn is [layers, T]")
        pa = p["attn"][()]
        same = all(np.array_equal(a[l, off[s]:off[s + 1]].reshape(heads, n[s], n[s]),
                                  pa[s, l, :, :n[s], :n[s]])
                   for s in range(len(n)) for l in range(pa.shape[1]))
        check(same, f"{what}: every ragged block equals the padded one")
        cum = np.concatenate([[0], np.cumsum(n)])
        for g in p["qk"]:
            for t in "qk":
                pq, rq = p["qk"][g][t][()], r["qk"][g][t]
                check(rq.attrs["layout"] == "ragged" and rq.shape[0] == cum[pq.shape[0]],
                      f"{what}: {g}/{t} is ragged, {pq.shape[0]} samples' tokens")
                check(all(np.array_equal(rq[cum[s]:cum[s + 1]].transpose(1, 0, 2),
                                         pq[s, :, :n[s]]) for s in range(pq.shape[0])),
                      f"{what}: {g}/{t} ragged rows equal the padded ones")


def check_half(f32, f16, what):
    with h5py.File(f32, "r") as a, h5py.File(f16, "r") as b:
        for name in ["attn", "qk/layer_0/q", "qk/layer_1/k"]:
            x, y = a[name][()], b[name][()]
            check(y.dtype == np.float16 and
                  np.array_equal(x.astype(np.float16).view(np.uint16), y.view(np.uint16)),
                  f"{what}: {name} is numpy's float16 of the float32 file")


def readers(f, tag, mpi):
    """Each reader's JSON on data file f, without the volatile fields."""
    out = {}
    out["measure"] = run("measure", f, "--threshold", "0.05", "--by", "head", "--json")
    out["measure_top_p"] = run("measure", f, "--top-p", "0.9", "--json")
    out["attn-stats"] = run("attn-stats", f, "--max-offset", "3", "--json")
    mm, ind = f"{tag}.mm.h5", f"{tag}.ind.h5"
    out["attn-derive"] = run("attn-derive", f, "--mean-map", mm, "--indicators", ind, "--json")
    out["prune"] = run("prune", f"{mm}:/layer_0", "--sparsity", "0.6", "-o", f"{tag}.pr.h5",
                       "--json")
    out["axis"] = run("axis", ind, "--by", "head", "--json")
    out["explain"] = run("explain", f"{f}:/qk/layer_1", "--sample", "2", "--norm",
                         "softmax,dnas", "--json")
    if mpi:
        out["attn-stats-mpi"] = run("attn-stats", f, "--max-offset", "3", "--json", mpi=2)
    return {k: strip(json.loads(v)) for k, v in out.items()}


def main():
    mpi = bool(os.environ.get("MPIRUN"))  # set by make check when built with MPI
    # Open MPI refuses root unless told (CI runs as root)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        if os.path.isdir(MODEL):
            model, text, extra = MODEL, TEXT, ["--limit", "12"]
        else:
            subprocess.run([sys.executable, os.path.join(SRCDIR, "tests/cli/fixtures/make_encoder.py"),
                            "model"], check=True)
            with open("t.txt", "w") as t:
                t.write("Hello, world! How are you? Hello.\nhello how are you, world?\n"
                        "you are hello. world! hello hello world how are you hello world\n")
            model, text, extra = "model", "t.txt", []
        res = {}
        for dt in ["fp32", "fp16"]:
            for lay in ["padded", "ragged"]:
                encode(model, text, f"{lay}_{dt}.h5", "--qk", "--layout", lay, "--dtype", dt,
                       *extra)
            check_blocks(f"padded_{dt}.h5", f"ragged_{dt}.h5", dt)
            for lay in ["padded", "ragged"]:
                res[lay, dt] = readers(f"{lay}_{dt}.h5", f"{lay}_{dt}", mpi)
            for k in res["padded", dt]:
                check(res["padded", dt][k] == res["ragged", dt][k],
                      f"{dt}: {k} prints the same for the padded and the ragged file")
            if mpi:
                check(res["ragged", dt]["attn-stats-mpi"] == res["ragged", dt]["attn-stats"],
                      f"{dt}: attn-stats on 2 ranks prints what one process prints")
        check_half("padded_fp32.h5", "padded_fp16.h5", "padded")
        check_half("ragged_fp32.h5", "ragged_fp16.h5", "ragged")
        encode(model, text, "limit.h5", "--qk-limit", "2", "--layout", "ragged", *extra)
        with h5py.File("limit.h5", "r") as f:
            check(f["qk/layer_0/q"].shape[0] == f["lengths"][:2].sum(),
                  "--qk-limit 2: the first 2 samples' tokens")
        # float16 against float32: the largest difference, reported
        worst = {}
        for k in res["padded", "fp32"]:
            a = dict(numbers(res["padded", "fp32"][k]))
            b = dict(numbers(res["padded", "fp16"][k]))
            diffs = [(abs(a[p] - b[p]), p) for p in a if p in b and math.isfinite(a[p])
                     and math.isfinite(b[p])]
            worst[k] = max(diffs) if diffs else (0.0, "")
            print(f"fp16 vs fp32: {k}: largest difference {worst[k][0]:.3g} at {worst[k][1]}")
        check(worst["attn-stats"][0] < 1e-3, "fp16: attn-stats within 1e-3 of fp32")
        check(worst["attn-derive"][0] < 1e-2, "fp16: attn-derive within 1e-2 of fp32")
    return checks.summary("test_encode_layouts")


if __name__ == "__main__":
    sys.exit(main())
