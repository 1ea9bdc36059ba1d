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
writing the compressed attention maps), and its forward pass alone (encode
--json's times); numpy's is the forward pass, then the same plus writing the
same layout with h5py.
Peak memory: maskkit's maximum resident set for 1,000 sentences
(/usr/bin/time -v)."""
import argparse
import json
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
    """(wall seconds of the whole process, peak RSS MiB or None, the forward
    pass's own seconds from --json)."""
    cmd = [maskkit, "encode", model, "--text", text, "--sentences", "--limit", str(limit),
           "-o", out, "--quiet", "--json"]
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
    t = json.loads(r.stdout)["times"]
    return dt, rss, sum(v for k, v in t.items() if k != "writing")


def numpy_write(path, probs, ids, lengths, n):
    """The same layout encode writes, with h5py: float32, one chunk per
    (sample, layer), shuffle + deflate level 1."""
    s, layers, heads = len(probs), probs[0].shape[0], probs[0].shape[1]
    with h5py.File(path, "w") as f:
        d = f.create_dataset("attn", (s, layers, heads, n, n), "f4", chunks=(1, 1, heads, n, n),
                             shuffle=True, compression="gzip", compression_opts=1)
        for k, p in enumerate(probs):
            block = np.zeros((layers, heads, n, n), np.float32)
            m = p.shape[-1]
            block[:, :, :m, :m] = p
            d[k] = block
        f["lengths"] = lengths
        f["ids"] = ids


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
        runs = [run_encode(maskkit, a.model, text, out, a.sentences) for _ in range(a.reps)]
        mk = [x[0] for x in runs]
        mk_fwd = [x[2] for x in runs]
        with h5py.File(out, "r") as f:
            ids, lengths = f["ids"][()], f["lengths"][()]
        n = len(lengths)
        model = bert_ref.Bert(a.model, dtype=np.float32)
        npt, npw = [], []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            probs = [model.forward(ids[s, :lengths[s]])[0] for s in range(n)]
            t1 = time.perf_counter()
            numpy_write(os.path.join(tmp, "np.h5"), probs, ids, lengths, ids.shape[1])
            npt.append(t1 - t0)
            npw.append(time.perf_counter() - t0)
        med = statistics.median
        print(f"{n} sentences, {int(lengths.sum())} tokens (mean {lengths.mean():.1f}, "
              f"longest {lengths.max()}), {threads} threads, medians of {a.reps}:")
        print(f"  forward pass:   maskkit {med(mk_fwd):.3f} s ({n / med(mk_fwd):.1f} sentences/s), "
              f"numpy {med(npt):.3f} s ({n / med(npt):.1f}/s): maskkit {med(npt) / med(mk_fwd):.2f}x "
              "faster")
        print(f"  with the output written (same layout, deflate 1 + shuffle): maskkit encode's "
              f"whole process {med(mk):.3f} s ({n / med(mk):.1f}/s), numpy + h5py {med(npw):.3f} s "
              f"({n / med(npw):.1f}/s): maskkit {med(npw) / med(mk):.2f}x faster")
        dt, rss, _ = run_encode(maskkit, a.model, text, out, 1000, timed=True)
        with h5py.File(out, "r") as f:
            m = f["lengths"].shape[0]
        print(f"  {m} sentences: {dt:.2f} s, peak RSS {rss:.0f} MiB, output "
              f"{os.path.getsize(out) / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
