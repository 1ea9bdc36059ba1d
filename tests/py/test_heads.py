#!/usr/bin/env python3
"""Cross-checks `maskkit heads` against an independent numpy computation of
every per-head number (prev, next, diag, band, cls, sep, punct, entropy,
entropy_norm, top-p sparsity, the Toeplitz R^2 of the mean map) over the
same maps, to 1e-6:

- always, on a small synthetic file written with h5py: heads built to be a
  previous-token head, a uniform (broad) one, a [CLS] sink and a random
  one, padding filled with junk, a vocab.txt tokenizer telling punctuation;
  their roles; --window, --sort, --csv -, --no-punct;
- on the real all-MiniLM-L6-v2 over the GPL-3 text (encode --sentences
  --limit 60) when ~/.cache/maskkit/all-MiniLM-L6-v2 exists: layer 0 head 2
  is a previous-token head, and the ragged layout gives the same CSV.  Skipped without the model (77), or failed
  when MASKKIT_REQUIRE_ALL is set."""
import csv
import io
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
MEASURES = ("prev", "next", "diag", "band", "cls", "sep", "punct", "entropy", "entropy_norm",
            "sparsity", "toeplitz_r2")
GPL = "/usr/share/common-licenses/GPL-3"


def heads(*args):
    r = subprocess.run([MASKKIT, "heads", "-q", *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit heads {' '.join(args)} exited {r.returncode}: "
                 f"{r.stderr.strip()}")
    return r.stdout


def top_p_kept(row, p):
    """The fewest keys holding p of the row's mass (float32 values summed in
    double, largest first), as `measure --top-p` counts them."""
    total = float(np.sum(row, dtype=np.float64))
    if not total > 0:
        return 0
    need = p * total * (1 - 1e-12)
    c = np.cumsum(np.sort(row.astype(np.float64))[::-1])
    return int(np.searchsorted(c, need, side="left")) + 1


def toeplitz_r2(a):
    m = a.shape[0]
    t = np.zeros_like(a)
    for d in range(-(m - 1), m):
        idx = np.arange(max(0, -d), min(m, m - d))
        t[idx, idx + d] = a[idx, idx + d].mean()
    tss = float(((a - a.mean()) ** 2).sum())
    if tss <= 1e-13 * float((a ** 2).sum()):
        return 1.0
    return 1.0 - min(float(((a - t) ** 2).sum()), tss) / tss


def reference(att, lens, ids, punct, w, p, m):
    """att: float32 [S, L, H, N, N]; every number of every head, pooled over
    the samples' real cells."""
    s_, layers, nh, n, _ = att.shape
    out = {}
    for l in range(layers):
        for h in range(nh):
            acc = dict.fromkeys(("prev", "next", "diag", "band", "cls", "sep", "punct",
                                 "entropy", "hnorm"), 0.0)
            rows = prev_rows = next_rows = norm_rows = 0
            rho = 0.0
            mmap = np.zeros((m, m))
            used = 0
            for s in range(s_):
                ln = int(lens[s])
                a = att[s, l, h, :ln, :ln].astype(np.float64)
                rows += ln
                acc["diag"] += np.trace(a)
                acc["cls"] += a[:, 0].sum()
                acc["sep"] += a[:, ln - 1].sum()
                acc["prev"] += np.diagonal(a, -1).sum()
                acc["next"] += np.diagonal(a, 1).sum()
                prev_rows += ln - 1
                next_rows += ln - 1
                i, j = np.indices((ln, ln))
                acc["band"] += a[np.abs(i - j) <= w].sum()
                with np.errstate(divide="ignore", invalid="ignore"):
                    ent = -np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0).sum(axis=1)
                acc["entropy"] += ent.sum()
                if ln >= 2:
                    acc["hnorm"] += (ent / math.log(ln)).sum()
                    norm_rows += ln
                if punct is not None:
                    keys = punct[ids[s, :ln]]
                    acc["punct"] += a[:, keys].sum()
                kept = sum(top_p_kept(att[s, l, h, r, :ln], p) for r in range(ln))
                rho += 1 - kept / (ln * ln)
                if ln >= m:
                    mmap += att[s, l, h, :m, :m].astype(np.float64)
                    used += 1
            div = lambda x, c: x / c if c else float("nan")
            out[(l, h)] = dict(
                prev=div(acc["prev"], prev_rows), next=div(acc["next"], next_rows),
                diag=acc["diag"] / rows, band=acc["band"] / rows, cls=acc["cls"] / rows,
                sep=acc["sep"] / rows,
                punct=acc["punct"] / rows if punct is not None else None,
                entropy=acc["entropy"] / rows, entropy_norm=div(acc["hnorm"], norm_rows),
                sparsity=rho / s_, toeplitz_r2=toeplitz_r2(mmap / used))
    return out


def same(x, y, tol=1e-6):
    if y is None or (isinstance(y, float) and math.isnan(y)):
        return x is None
    return x is not None and abs(x - y) <= tol


def compare(got, ref, what):
    for row in got["by_head"]:
        r = ref[(row["layer"], row["head"])]
        for k in MEASURES:
            check(same(row[k], r[k]), f"{what}: layer {row['layer']} head {row['head']} "
                  f"{k}: maskkit {row[k]}, numpy {r[k]}")


VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "the", "a", "cat",
         "sat", "##s", "on", "mat", "(", ")", "dog"]


def synthetic(tmp):
    rng = np.random.default_rng(31)
    s_, layers, nh, n = 6, 2, 4, 12
    lens = np.array([12, 1, 2, 7, 9, 12])
    att = rng.random((s_, layers, nh, n, n)).astype(np.float32) * 5  # junk in the padding
    ids = np.zeros((s_, n), dtype=np.int32)
    for s, ln in enumerate(lens):
        ids[s, :ln] = rng.integers(5, len(VOCAB), ln)
        ids[s, 0], ids[s, ln - 1] = 2, 3
        for l in range(layers):
            blk = np.zeros((nh, ln, ln))
            for i in range(ln):
                blk[0, i, max(i - 1, 0)] = 1.0       # previous token (row 0: itself)
            blk[1] = 1.0 / ln                          # uniform
            blk[2, :, 0] = 1.0                         # [CLS]
            z = rng.standard_normal((ln, ln)) * 2
            e = np.exp(z - z.max(axis=1, keepdims=True))
            blk[3] = e / e.sum(axis=1, keepdims=True)
            att[s, l, :, :ln, :ln] = blk
    path = os.path.join(tmp, "syn.h5")
    with h5py.File(path, "w") as f:
        f["attn"] = att
        f["lengths"] = lens.astype(np.int64)
        f["ids"] = ids
    vocab = os.path.join(tmp, "vocab.txt")
    with open(vocab, "w") as f:
        f.write("\n".join(VOCAB) + "\n")
    punct = np.array([t in (".", ",", "!", "(", ")") for t in VOCAB])
    return path, vocab, att, lens, ids, punct


def check_synthetic(tmp):
    path, vocab, att, lens, ids, punct = synthetic(tmp)
    for w, p, m in ((2, 0.9, 7), (0, 0.5, 2), (5, 1.0, 12)):
        got = json.loads(heads(path, "--tokenizer", vocab, "--window", str(w), "--top-p",
                               str(p), "--map-size", str(m), "--json"))
        compare(got, reference(att, lens, ids, punct, w, p, m), f"synthetic w={w} p={p} m={m}")
        check(got["map_samples"] == int((lens >= m).sum()), f"map_samples for m={m}")
    got = json.loads(heads(path, "--tokenizer", vocab, "--json"))
    roles = {(r["layer"], r["head"]): r["role"] for r in got["by_head"]}
    for l in range(2):
        check(roles[(l, 0)] == "previous-token", f"layer {l} head 0: {roles[(l, 0)]}")
        check(roles[(l, 1)] == "broad", f"layer {l} head 1: {roles[(l, 1)]}")
        check(roles[(l, 2)] == "cls-sep-sink", f"layer {l} head 2: {roles[(l, 2)]}")
    uni = [r for r in got["by_head"] if r["head"] == 1][0]
    check(abs(uni["entropy_norm"] - 1) < 1e-6, f"uniform head: entropy_norm {uni['entropy_norm']}")
    check(got["map_size"] == 7, f"default map size: the lower median length 7, got "
          f"{got['map_size']}")
    # --sort prev: largest first; the CSV holds the same rows in that order
    rows = list(csv.DictReader(io.StringIO(heads(path, "--tokenizer", vocab, "--sort",
                                                 "prev", "--csv", "-"))))
    prevs = [float(r["prev"]) for r in rows]
    check(prevs == sorted(prevs, reverse=True), f"--sort prev: {prevs}")
    check(len(rows) == 8 and rows[0]["head"] == "0", "--sort prev puts a head 0 first")
    # without a tokenizer: punct null, and the file says why
    got = json.loads(heads(path, "--json"))
    check(all(r["punct"] is None for r in got["by_head"]), "no tokenizer: punct is null")
    check(got["punct_from"] is None and "no tokenizer" in (got["punct_note"] or ""),
          f"no tokenizer: note {got['punct_note']!r}")
    # a tokenizer that does not hold the file's ids: exit 2, one line naming --tokenizer
    small = os.path.join(tmp, "small.txt")
    with open(small, "w") as f:
        f.write("\n".join(VOCAB[:6]) + "\n")
    r = subprocess.run([MASKKIT, "heads", path, "--tokenizer", small, "--csv", "x.csv"],
                       capture_output=True, text=True, cwd=tmp)
    check(r.returncode == 2 and "is not in the tokenizer" in r.stderr and
          "--tokenizer" in r.stderr and r.stderr.count("\n") == 1 and
          not os.path.exists(os.path.join(tmp, "x.csv")),
          f"a tokenizer without the ids: exit {r.returncode}, {r.stderr!r}")
    text = heads(path, "--no-punct")
    check("punct " not in text.splitlines()[-1] and "none: not asked for" in text,
          "--no-punct: no punct column, and said so")


def check_real(tmp):
    model = os.environ.get("MASKKIT_MODEL") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "maskkit",
        "all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(model, "config.json")) or not os.path.isfile(GPL):
        print(f"SKIP: real model: no model at {model} or no {GPL} (set MASKKIT_MODEL to "
              "all-MiniLM-L6-v2's HuggingFace directory)")
        return False
    path = os.path.join(tmp, "gpl.h5")
    r = subprocess.run([MASKKIT, "encode", model, "--text", GPL, "--sentences", "--limit",
                        "60", "-q", "-o", path], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit encode exited {r.returncode}: {r.stderr.strip()}")
    got = json.loads(heads(path, "--json"))
    with h5py.File(path, "r") as f:
        att, lens, ids = f["attn"][()], f["lengths"][()], f["ids"][()]
    # punctuation the tokenizer's way, recomputed here from its vocabulary
    with open(os.path.join(model, "tokenizer.json"), encoding="utf-8") as f:
        ids_of = json.load(f)["model"]["vocab"]
    vocab = [""] * (max(ids_of.values()) + 1)
    for t, k in ids_of.items():
        vocab[k] = t
    import unicodedata

    def is_punct(ch):
        c = ord(ch)
        return (33 <= c <= 47 or 58 <= c <= 64 or 91 <= c <= 96 or 123 <= c <= 126 or
                unicodedata.category(ch).startswith("P"))
    punct = np.array([len(t) > 0 and all(is_punct(ch) for ch in t) for t in vocab])
    ref = reference(att, lens, ids, punct, got["window"], got["top_p"], got["map_size"])
    compare(got, ref, "all-MiniLM-L6-v2")
    h02 = [r for r in got["by_head"] if r["layer"] == 0 and r["head"] == 2][0]
    check(h02["role"] == "previous-token" and h02["prev"] > 0.99,
          f"layer 0 head 2: {h02['role']}, prev {h02['prev']}")
    # the compact layout (no padding) read through the same data-set reader:
    # the same numbers, to the bit, as the padded file's
    ragged = os.path.join(tmp, "gpl_ragged.h5")
    r = subprocess.run([MASKKIT, "encode", model, "--text", GPL, "--sentences", "--limit",
                        "60", "--layout", "ragged", "-q", "-o", ragged], capture_output=True,
                       text=True)
    if r.returncode == 0:
        check(heads(ragged, "--csv", "-") == heads(path, "--csv", "-"),
              "--layout ragged: the same CSV as the padded file")
    else:
        check("--layout" in r.stderr, f"encode --layout ragged: {r.stderr.strip()}")
    return True


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_synthetic(tmp)
        real = check_real(tmp)
    status = checks.summary("test_heads")
    if not real and os.environ.get("MASKKIT_REQUIRE_ALL"):
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
