"""An independent numpy BERT encoder, the reference `maskkit encode` is
checked against (tests/py/test_encode.py) and timed against
(bench/encode_vs_numpy.py).  Written from the BERT paper's and HuggingFace's
documented semantics, sharing no code with maskkit: safetensors is parsed
here from its published layout (8-byte little-endian header length, a JSON
header, raw little-endian data), the forward pass is plain numpy."""

import json
import math
import os
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I64": np.int64,
           "I32": np.int32}


def read_safetensors(path):
    """{name: array} of every tensor (BF16 widened to float32)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = blob[base + a:base + b]
        if t["dtype"] == "BF16":
            x = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = x.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_DTYPES[t["dtype"]]).newbyteorder("<"))
        out[name] = arr.reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    """Writes {name: float32 array} (the test's small random models)."""
    header, chunks, off = {}, [], 0
    for name, arr in tensors.items():
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [off, off + len(data)]}
        chunks.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


class Bert:
    """A BERT encoder from HuggingFace PyTorch names ([out, in] linear
    weights), with or without a 'bert.' prefix.  float64 (the tests'
    reference: erf to double precision) or float32 (the benchmark's: erf to
    float32 precision)."""

    def __init__(self, model_dir, dtype=np.float64):
        with open(os.path.join(model_dir, "config.json")) as f:
            self.cfg = json.load(f)
        t = read_safetensors(os.path.join(model_dir, "model.safetensors"))
        t = {(k[5:] if k.startswith("bert.") else k): v for k, v in t.items()}
        self.dtype = dtype
        self.w = {k: v.astype(dtype) for k, v in t.items() if v.dtype.kind == "f"}
        self.layers = self.cfg["num_hidden_layers"]
        self.heads = self.cfg["num_attention_heads"]
        self.eps = self.cfg.get("layer_norm_eps", 1e-12)

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]

    def _lin(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def forward(self, ids, mask=None):
        """One sentence's token ids -> (probs [layers, heads, n, n],
        q [layers, heads, n, dk], k [layers, heads, n, dk]); q, k before the
        1/sqrt(dk) scaling.  mask: optional bool [n, n], False = not attended."""
        ids = np.asarray(ids)
        n, w = len(ids), self.w
        x = (w["embeddings.word_embeddings.weight"][ids] +
             w["embeddings.position_embeddings.weight"][:n] +
             w["embeddings.token_type_embeddings.weight"][0])
        x = self._ln(x, "embeddings.LayerNorm")
        h = self.heads
        dk = x.shape[1] // h
        probs, qs, ks = [], [], []
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q = self._lin(x, p + "attention.self.query").reshape(n, h, dk).transpose(1, 0, 2)
            k = self._lin(x, p + "attention.self.key").reshape(n, h, dk).transpose(1, 0, 2)
            v = self._lin(x, p + "attention.self.value").reshape(n, h, dk).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / math.sqrt(dk)
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            s = s - s.max(-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(-1, keepdims=True)
            ctx = (a @ v).transpose(1, 0, 2).reshape(n, h * dk)
            x = self._ln(x + self._lin(ctx, p + "attention.output.dense"),
                         p + "attention.output.LayerNorm")
            f = self._lin(x, p + "intermediate.dense")
            erf = _erf if self.dtype == np.float64 else _erf_fast
            f = 0.5 * f * (1.0 + erf(f / math.sqrt(2.0)))
            x = self._ln(x + self._lin(f, p + "output.dense"), p + "output.LayerNorm")
            probs.append(a)
            qs.append(q)
            ks.append(k)
        return np.stack(probs), np.stack(qs), np.stack(ks)


def _erf(x):
    """erf elementwise to double precision without scipy: the Maclaurin
    series for |x| <= 3 (terms peak near 170, so cancellation costs about
    1e-14) and erfc's continued fraction beyond (converged for |x| >= 3)."""
    z = np.abs(x.astype(np.float64))
    out = np.empty_like(z)
    small = z <= 3.0
    zs = z[small]
    term = zs.copy()
    acc = zs.copy()
    z2 = zs * zs
    for n in range(1, 60):
        term = term * (-z2) / n
        acc += term / (2 * n + 1)
    out[small] = acc * (2.0 / math.sqrt(math.pi))
    zb = z[~small]
    if zb.size:
        frac = np.zeros_like(zb)
        for k in range(80, 0, -1):  # erfc(z) = e^{-z^2}/sqrt(pi) / (z + (1/2)/(z + 1/(z + ...)))
            frac = (k / 2.0) / (zb + frac)
        out[~small] = 1.0 - np.exp(-zb * zb) / math.sqrt(math.pi) / (zb + frac)
    return (np.sign(x) * out).astype(x.dtype)


def _erf_fast(x):
    """erf to about 1.5e-7 (Abramowitz & Stegun 7.1.26), float32's own
    precision: the float32 forward pass the benchmark times."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
               + 0.254829592) * t * np.exp(-a * a)
    return np.sign(x) * y


def model_dir():
    """The real model's directory, or None: $MASKKIT_MODEL, else the cache
    tools/fetch-model.sh fills."""
    d = os.environ.get("MASKKIT_MODEL") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "maskkit", "all-MiniLM-L6-v2")
    return d if os.path.isfile(os.path.join(d, "model.safetensors")) else None
