#!/usr/bin/env python3
"""Cross-checks `maskkit toeplitz` and `maskkit positional` on a real model
(all-MiniLM-L6-v2, a HuggingFace directory with config.json and
model.safetensors) against numpy, reading the safetensors file here with
json and np.frombuffer, to 1e-9; the same model split into shards, its E_P
as float16 and bfloat16, and a bare .npy E_P (an exact Toeplitz one: R^2 =
1).  The model is $MASKKIT_MODEL, else
${XDG_CACHE_HOME:-~/.cache}/maskkit/all-MiniLM-L6-v2; without it the test
is skipped (77), or fails when MASKKIT_REQUIRE_ALL is set."""
import json
import os
import struct
import sys
import tempfile

import numpy as np

import checks
from checks import check, run_json

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def model_dir():
    env = os.environ.get("MASKKIT_MODEL")
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "maskkit", "all-MiniLM-L6-v2")


def read_safetensors(path):
    """{name: float64 array}, from the header and the bytes, as the format says."""
    with open(path, "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    data = raw[8 + hlen:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        if t["dtype"] == "BF16":
            u = np.frombuffer(data[begin:end], dtype="<u2").astype(np.uint32) << 16
            a = u.view(np.float32)
        else:
            a = np.frombuffer(data[begin:end], dtype=DTYPES[t["dtype"]])
        out[name] = a.reshape(t["shape"]).astype(np.float64)
    return out


def write_safetensors(path, tensors):
    """tensors: {name: (dtype, raw bytes, shape)}, in order."""
    header, off, blobs = {}, 0, []
    for name, (dtype, blob, shape) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(blob)]}
        off += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def toeplitz_fit(a):
    """R^2, RSS, TSS of the least-squares Toeplitz fit, diagonal by diagonal."""
    n = a.shape[0]
    rss = 0.0
    for d in range(-(n - 1), n):
        diag = np.diagonal(a, d)
        rss += ((diag - diag.mean()) ** 2).sum()
    tss = ((a - a.mean()) ** 2).sum()
    return 1.0 - rss / tss, rss, tss


def close(x, y, tol=1e-9):
    return checks.close(x, y, tol)


def positional_terms(w, layer, heads):
    """F_P per head: PyTorch weights (out x in), biases with the mean word."""
    e_p = w["embeddings.position_embeddings.weight"]
    mean_word = w["embeddings.word_embeddings.weight"].mean(axis=0)
    pre = f"encoder.layer.{layer}.attention.self."
    wq, bq = w[pre + "query.weight"], w[pre + "query.bias"]
    wk, bk = w[pre + "key.weight"], w[pre + "key.bias"]
    a = mean_word @ wq.T + bq
    c = mean_word @ wk.T + bk
    q = e_p @ wq.T + a
    k = e_p @ wk.T + c
    dk = q.shape[1] // heads
    out = []
    for h in range(heads):
        s = slice(h * dk, (h + 1) * dk)
        out.append((q[:, s] @ k[:, s].T - a[s] @ c[s]) / np.sqrt(dk))
    return out


def check_toeplitz(path, e_p, what):
    p = e_p @ e_p.T
    r2, rss, tss = toeplitz_fit(p)
    r2k, _, _ = toeplitz_fit(p[:128, :128])
    got = run_json("toeplitz", path)
    check(got["n"] == e_p.shape[0] and got["d"] == e_p.shape[1], what + ": shape")
    check(close(got["r2"], r2), what + f": R^2 {got['r2']} vs {r2}")
    check(close(got["rss"], rss) and close(got["tss"], tss), what + ": RSS and TSS")
    check(close(got["first"]["r2"], r2k), what + f": R^2 [:128] {got['first']['r2']} vs {r2k}")
    print(f"{what}: R^2 {got['r2']:.12f} (numpy {r2:.12f}, diff {abs(got['r2'] - r2):.2e}), "
          f"[:128] {got['first']['r2']:.12f} (diff {abs(got['first']['r2'] - r2k):.2e})")


def check_model(model):
    w = read_safetensors(os.path.join(model, "model.safetensors"))
    with open(os.path.join(model, "config.json")) as f:
        config = json.load(f)
    heads, layers = config["num_attention_heads"], config["num_hidden_layers"]
    check_toeplitz(model, w["embeddings.position_embeddings.weight"], "toeplitz MODEL_DIR")
    for layer in range(layers):
        got = run_json("positional", model, "--layer", str(layer))
        what = f"positional layer {layer}"
        check(got["heads"] == heads and got["layers"] == layers, what + ": heads from config")
        worst = 0.0
        for h, f_p in enumerate(positional_terms(w, layer, heads)):
            r2, rss, tss = toeplitz_fit(f_p)
            g = got["per_head"][h]
            worst = max(worst, abs(g["r2"] - r2))
            check(close(g["r2"], r2), what + f" head {h}: R^2 {g['r2']} vs {r2}")
            check(close(g["rss"], rss) and close(g["tss"], tss), what + f" head {h}: RSS, TSS")
        print(f"{what}: mean R^2 over heads {np.mean([x['r2'] for x in got['per_head']]):.9f}, "
              f"max |R^2 - numpy| {worst:.2e}")
    return w


def check_variants(model, w, tmp):
    """The model in two shards; its E_P as float16 and as bfloat16."""
    names = sorted(w)
    with open(os.path.join(model, "model.safetensors"), "rb") as f:
        raw = f.read()
    (hlen,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + hlen])
    shards, weight_map = ({}, {}), {}
    for k, name in enumerate(names):
        t = header[name]
        b, e = t["data_offsets"]
        shards[k % 2][name] = (t["dtype"], raw[8 + hlen + b:8 + hlen + e], t["shape"])
        weight_map[name] = f"model-0000{k % 2 + 1}-of-00002.safetensors"
    sharded = os.path.join(tmp, "sharded")
    os.mkdir(sharded)
    for s in range(2):
        write_safetensors(os.path.join(sharded, f"model-0000{s + 1}-of-00002.safetensors"), shards[s])
    with open(os.path.join(sharded, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    with open(os.path.join(sharded, "config.json"), "w") as f:
        f.write(open(os.path.join(model, "config.json")).read())
    check_toeplitz(sharded, w["embeddings.position_embeddings.weight"], "toeplitz sharded")
    got = run_json("positional", sharded, "--layer", "5")
    want = run_json("positional", model, "--layer", "5")
    check(got["per_head"] == want["per_head"], "positional sharded: the same as one file")

    e_p = w["embeddings.position_embeddings.weight"]
    half = e_p.astype("<f2")
    bf = (e_p.astype(np.float32).view(np.uint32) >> 16).astype("<u2")
    for dtype, blob, exact in (("F16", half.tobytes(), half.astype(np.float64)),
                               ("BF16", bf.tobytes(),
                                (bf.astype(np.uint32) << 16).view(np.float32).astype(np.float64))):
        path = os.path.join(tmp, f"e_{dtype}.safetensors")
        write_safetensors(path, {"embeddings.position_embeddings.weight": (dtype, blob, e_p.shape)})
        check_toeplitz(path, exact, f"toeplitz E_P as {dtype}")


def check_npy(tmp):
    """An exact Toeplitz E_P: p_i = (cos w_k i, sin w_k i), so P_ij depends on i - j."""
    n, freqs = 200, np.array([0.01, 0.05, 0.3, 1.1])
    i = np.arange(n)[:, None]
    e_p = np.concatenate([np.cos(i * freqs), np.sin(i * freqs)], axis=1)
    path = os.path.join(tmp, "e_p.npy")
    np.save(path, e_p)
    got = run_json("toeplitz", path)
    check(got["n"] == n and got["d"] == 8 and got["dataset"] == "/", ".npy E_P: shape and name")
    check(close(got["r2"], 1.0) and close(got["first"]["r2"], 1.0), f".npy E_P: R^2 {got['r2']}")
    print(f".npy exact Toeplitz E_P: R^2 {got['r2']:.15f}, [:128] {got['first']['r2']:.15f}")
    path = os.path.join(tmp, "e_p_fortran.npy")
    e32 = np.asfortranarray(np.random.default_rng(3).standard_normal((150, 7)).astype(np.float32))
    np.save(path, e32)
    check_toeplitz(path, e32.astype(np.float64), ".npy float32 Fortran order")


def main():
    model = model_dir()
    with tempfile.TemporaryDirectory() as tmp:
        check_npy(tmp)
        if not os.path.isfile(os.path.join(model, "model.safetensors")):
            print(f"SKIP: no model at {model} (set MASKKIT_MODEL to a HuggingFace model "
                  "directory such as all-MiniLM-L6-v2)")
            if os.environ.get("MASKKIT_REQUIRE_ALL"):
                return 1
            return 77 if checks.failures == 0 else 1
        w = check_model(model)
        check_variants(model, w, tmp)
    return checks.summary("test_real_model")


if __name__ == "__main__":
    sys.exit(main())
