#!/usr/bin/env python3
"""Write an HDF5 file laid out like a HuggingFace BERT `tf_model.h5`.

    make_tf_model.py OUT.h5 [--n 512] [--d 256] [--layers 4] [--vocab 2000]
                            [--seed 0] [--layout tf|torch]

The weights are synthetic but shaped like trained ones, so that the
`maskkit toeplitz` and `maskkit positional` examples have something to chew
on without downloading a model:

* position embeddings: a few sinusoids of position with random phases and
  frequencies, mixed into d dimensions, plus noise that grows with position
  (later positions are seen less often in training, as BERT's positions
  beyond 128 were), so P = E E^T is nearly Toeplitz near the start and less
  so further on;
* word embeddings: Gaussian rows around a common mean (the mean word is not
  zero, as in trained models);
* query and key kernels of every layer: random, plus in some heads a
  component that makes the positional term peak at a given offset (previous
  token, next token), and small biases.

The layout (`--layout tf`, the default) is HuggingFace's TF one:
  /bert/tf_bert_model/bert/embeddings/position_embeddings/embeddings:0   n x d
  /bert/tf_bert_model/bert/embeddings/word_embeddings/weight:0           vocab x d
  /bert/tf_bert_model/bert/encoder/layer_._L/attention/self/query/kernel:0  d x d (in x out)
  .../query/bias:0, .../key/kernel:0, .../key/bias:0
`--layout torch` writes a PyTorch state dict's names and shapes instead
(`bert.encoder.layer.L.attention.self.query.weight`, out x in), as the export
recipe below produces.

Exporting a real model's weights (needs torch and transformers, not maskkit):

    import h5py, torch
    from transformers import AutoModel
    sd = AutoModel.from_pretrained("bert-base-uncased").state_dict()
    with h5py.File("bert-base.h5", "w") as f:
        for name, t in sd.items():
            f.create_dataset(name, data=t.float().numpy())

then `maskkit toeplitz bert-base.h5` and `maskkit positional bert-base.h5
--layer 0 --fit 2`.  HuggingFace's own `tf_model.h5` files (BERT, ALBERT,
RoBERTa, ELECTRA) are read as they are.
"""
import argparse
import os
import sys

import h5py
import numpy as np


def position_embeddings(rng, n, d, k=12):
    """Returns E_P, the frequencies and the mixing matrix (d x 2k, orthonormal
    columns: E_P @ mix recovers the sinusoids, up to noise)."""
    freq = np.sort(rng.uniform(0.002, 0.6, k))
    phase = rng.uniform(0, 2 * np.pi, k)
    amp = 1.0 / np.sqrt(np.arange(1, k + 1))
    pos = np.arange(n)[:, None]
    waves = np.concatenate([amp * np.sin(freq * pos + phase),
                            amp * np.cos(freq * pos + phase)], axis=1)
    mix, _ = np.linalg.qr(rng.standard_normal((d, 2 * k)))
    noise = 0.02 * (1.0 + 4.0 * (np.arange(n) >= 128))[:, None]
    e_p = 0.04 * (waves @ mix.T + noise * rng.standard_normal((n, d)))
    return e_p, freq, mix


def attention(rng, d, heads, freq, mix, layer):
    """Query and key kernels: some heads are positional (their query and key
    read the sinusoids out of E_P, the key's rotated by s positions, so the
    scores peak at j = i + s); the others are random, like content heads."""
    dk = d // heads
    k = len(freq)
    wq = 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
    wk = 0.3 * rng.standard_normal((d, d)) / np.sqrt(d)
    shifts = (-1, 1, None, 0, -2, 3)
    for h in range(heads):
        s = shifts[(h + layer) % len(shifts)]
        if s is None or 2 * k > dk:
            continue
        c, sn = np.cos(-freq * s), np.sin(-freq * s)
        rot = np.zeros((2 * k, 2 * k))  # rotates each (sin, cos) pair by freq * s
        rot[:k, :k], rot[:k, k:] = np.diag(c), -np.diag(sn)
        rot[k:, :k], rot[k:, k:] = np.diag(sn), np.diag(c)
        cols = slice(h * dk, h * dk + 2 * k)
        wq[:, cols] += 25.0 * mix
        wk[:, cols] += 25.0 * mix @ rot
    bq = 0.02 * rng.standard_normal(d)
    bk = 0.02 * rng.standard_normal(d)
    return wq, bq, wk, bk


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=512)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layout", choices=("tf", "torch"), default="tf")
    a = ap.parse_args()
    if a.n < 2 or a.d < 2 or a.d % a.heads:
        sys.exit("make_tf_model.py: need n >= 2 and d divisible by --heads")
    rng = np.random.default_rng(a.seed)
    e_p, freq, mix = position_embeddings(rng, a.n, a.d)
    words = 0.01 * rng.standard_normal(a.d) + 0.05 * rng.standard_normal((a.vocab, a.d))
    # written beside OUT and renamed, so that a failure never truncates an old OUT
    tmp = a.out + ".tmp"
    with h5py.File(tmp, "w") as f:
        if a.layout == "tf":
            root = "bert/tf_bert_model/bert/"
            f[root + "embeddings/position_embeddings/embeddings:0"] = e_p.astype(np.float32)
            f[root + "embeddings/word_embeddings/weight:0"] = words.astype(np.float32)
        else:
            f["bert.embeddings.position_embeddings.weight"] = e_p.astype(np.float32)
            f["bert.embeddings.word_embeddings.weight"] = words.astype(np.float32)
        for layer in range(a.layers):
            wq, bq, wk, bk = attention(rng, a.d, a.heads, freq, mix, layer)
            for name, w, b in (("query", wq, bq), ("key", wk, bk)):
                if a.layout == "tf":
                    base = f"{root}encoder/layer_._{layer}/attention/self/{name}/"
                    f[base + "kernel:0"] = w.astype(np.float32)
                    f[base + "bias:0"] = b.astype(np.float32)
                else:
                    base = f"bert.encoder.layer.{layer}.attention.self.{name}."
                    f[base + "weight"] = w.T.astype(np.float32)
                    f[base + "bias"] = b.astype(np.float32)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
