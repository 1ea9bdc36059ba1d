#!/usr/bin/env python3
"""`maskkit encode` against a numpy forward pass of the same model on the same
sentences (bench/, not a test: it prints medians and takes minutes).

    MASKKIT=build/maskkit python3 bench/encode_vs_numpy.py [MODEL_DIR] [--reps 3]
                                                           [--sentences 200]

MODEL_DIR defaults to the model tools/fetch-model.sh fetches.  The text is the
licences in /usr/share/common-licenses (GPL-3 first), split into sentences by
maskkit.  Both sides run on the same token ids (those maskkit wrote), the
numpy side in float32, sentence by sentence, with OpenBLAS under numpy on the
same threads (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, default 2).  maskkit's
time is the whole process (reading the model, tokenising, the forward pass,
writing the compressed attention maps); numpy's is the forward pass only.
Peak memory: maskkit's maximum resident set for 1,000 sentences
(/usr/bin/time -v)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "py"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402

import bert_ref  # noqa: E402

LICENCES = ["GPL-3", "GPL-2", "LGPL-3", "LGPL-2.1", "Apache-2.0", "GFDL-1.3", "MPL-2.0",
            "Artistic", "BSD"]


def text_file(tmp):
    path = os.path.join(tmp, "licences.txt")
    with open(path, "w") as out:
        for name in LICENCES:
            p = os.path.join("/usr/share/common-licenses", name)
            if os.path.exists(p):
                out.write(open(p, encoding="utf-8", errors="replace").read() + "\n\n")
    return path


def run_encode(maskkit, model, text, out, limit, timed=False):
    cmd = [maskkit, "encode", model, "--text", text, "--sentences", "--limit", str(limit),
           "-o", out, "--quiet"]
    if timed:
        cmd = ["/usr/bin/time", "-v"] + cmd
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"maskkit encode failed: {r.stderr.strip()}")
    rss = None
    for line in r.stderr.splitlines():
        if "Maximum resident set size" in line:
            rss = int(line.split()[-1]) / 1024
    return dt, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", nargs="?", default=bert_ref.model_dir())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=200)
    a = ap.parse_args()
    maskkit = os.environ.get("MASKKIT", "build/maskkit")
    if not a.model:
        print("encode_vs_numpy: skipped, no model (run tools/fetch-model.sh or give MODEL_DIR)")
        return
    threads = os.environ.setdefault("OMP_NUM_THREADS", "2")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", threads)
    with tempfile.TemporaryDirectory() as tmp:
        text = text_file(tmp)
        out = os.path.join(tmp, "attn.h5")
        mk = [run_encode(maskkit, a.model, text, out, a.sentences)[0] for _ in range(a.reps)]
        with h5py.File(out, "r") as f:
            ids, lengths = f["ids"][()], f["lengths"][()]
        n = len(lengths)
        model = bert_ref.Bert(a.model, dtype=np.float32)
        npt = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            for s in range(n):
                model.forward(ids[s, :lengths[s]])
            npt.append(time.perf_counter() - t0)
        mk_med, np_med = statistics.median(mk), statistics.median(npt)
        print(f"{n} sentences, {int(lengths.sum())} tokens (mean {lengths.mean():.1f}, "
              f"longest {lengths.max()}), {threads} threads, medians of {a.reps}:")
        print(f"  maskkit encode (whole process): {mk_med:.3f} s = {n / mk_med:.1f} sentences/s")
        print(f"  numpy forward pass (float32):   {np_med:.3f} s = {n / np_med:.1f} sentences/s")
        print(f"  maskkit is {np_med / mk_med:.2f}x faster")
        dt, rss = run_encode(maskkit, a.model, text, out, 1000, timed=True)
        with h5py.File(out, "r") as f:
            m = f["lengths"].shape[0]
        print(f"  {m} sentences: {dt:.2f} s, peak RSS {rss:.0f} MiB, output "
              f"{os.path.getsize(out) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
