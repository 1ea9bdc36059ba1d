#!/usr/bin/env python3
"""A small, realistic attention data set for `maskkit measure`, `attn-stats`,
`prune` and `axis`: make_attention_data.py OUT.h5 [--samples 300] [--n 64]
[--layers 2] [--heads 4] [--seed 0].

Each sample is a token sequence [CLS] w_1 ... w_k [SEP] of its own length
N_i (log-normally distributed, 8..N) padded to N.  A small Transformer encoder
with random weights (d = 64, sinusoidal positions, pre-LayerNorm, key padding
mask, residual attention and a ReLU feed-forward block) runs on it in numpy,
and its attention probabilities are kept.  Most heads add a
relative position bias peaked at an offset of their own (the previous
token, the next, the token itself, two back...), the others are
content-only (broad), and every head gives [CLS] and [SEP] a bias of its
own: what the heads of trained BERT-like models look like.

Datasets written:
  attentions  float16 [samples, layers, heads, N, N]  softmax over real keys
  lengths     int32   [samples]                       N_i
  importance  float32 [heads, N, N]    layer 0's attention averaged over the
              samples of full length N (as SparseBERT prunes from)
  logits      float32 [heads, N, N]    log(importance), for --gumbel
  rows, cols  uint8   [samples, layers, N]  axis indicators, derived from the
              attention as AAA's learned ones would be: a query row is
              important when its attention is broad (entropy above 90% of
              log N_i), a key column when it receives more than twice the
              mean mass.
  explain/x, explain/wq, explain/wk  float32  layer 0's projection input
              [N, d] for the first full-length sample and its query and key
              weights [d, d] (applied as x W: `maskkit explain
              OUT.h5:/explain --heads 4 --linear tf`)

To export a real model's attention instead (HuggingFace transformers):
  out = model(**batch, output_attentions=True)
  a = torch.stack(out.attentions, 1)  # [batch, layers, heads, N, N]
  h5py.File("real.h5", "w").update(attentions=a.half().numpy(),
                                   lengths=batch["attention_mask"].sum(1).numpy())
"""
import argparse

import h5py
import numpy as np


def layer_norm(x):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)


def sinusoids(n, d):
    pos = np.arange(n)[:, None]
    k = np.arange(d // 2)[None, :]
    angle = pos / 10000 ** (2 * k / d)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


# Each head's role: the key offset j - i it looks for and how strongly
# (None: content only, a broad head).  Trained BERT-like models have heads on
# the previous and next token, on the token itself, broad heads, and heads
# that gather on [CLS]/[SEP] (the sink bias below).
HEAD_ROLES = [(-1, 6.0), (None, 0.0), (1, 6.0), (0, 2.5), (2, 4.0), (None, 0.0), (-2, 4.0),
              (0, 1.5)]


class Model:
    def __init__(self, rng, n, layers, heads, d=64, vocab=500):
        self.d, self.heads, self.dk = d, heads, d // heads
        self.words = rng.standard_normal((vocab, d)) * 0.5
        self.pos = sinusoids(n, d)
        offset = np.arange(n)[None, :] - np.arange(n)[:, None]  # j - i
        self.layers = []
        for l in range(layers):
            # a relative position bias per head (as T5 and ALiBi models learn)
            bias = np.zeros((heads, n, n))
            for h in range(heads):
                delta, strength = HEAD_ROLES[(h + 3 * l) % len(HEAD_ROLES)]
                if delta is not None:
                    bias[h] = strength * np.exp(-0.5 * ((offset - delta) / 0.7) ** 2)
            self.layers.append({
                "bias": bias,
                "sink": rng.uniform(0.0, 3.0, heads)[:, None, None],  # on [CLS]/[SEP]
                "wq": rng.standard_normal((d, d)) / np.sqrt(d),
                "wk": rng.standard_normal((d, d)) / np.sqrt(d),
                "wv": rng.standard_normal((d, d)) / np.sqrt(d),
                "wo": rng.standard_normal((d, d)) / np.sqrt(d),
                "w1": rng.standard_normal((d, 4 * d)) / np.sqrt(d),
                "w2": rng.standard_normal((4 * d, d)) / np.sqrt(4 * d),
            })

    def projection_input(self, tokens):
        """Layer 0's input to its query and key projections."""
        return layer_norm(self.words[tokens] + self.pos[: tokens.size])

    def attentions(self, tokens, length):
        n = tokens.size
        x = self.words[tokens] + self.pos[:n]
        pad = np.arange(n) >= length
        out = []
        for w in self.layers:
            h = layer_norm(x)
            q = (h @ w["wq"]).reshape(n, self.heads, self.dk).transpose(1, 0, 2)
            k = (h @ w["wk"]).reshape(n, self.heads, self.dk).transpose(1, 0, 2)
            v = (h @ w["wv"]).reshape(n, self.heads, self.dk).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / np.sqrt(self.dk) + w["bias"]
            s[:, :, [0, length - 1]] += w["sink"]  # [CLS] and [SEP] draw attention
            s[:, :, pad] = -np.inf
            s -= s.max(-1, keepdims=True)
            p = np.exp(s)
            p /= p.sum(-1, keepdims=True)
            out.append(p)
            x = x + (p @ v).transpose(1, 0, 2).reshape(n, self.d) @ w["wo"]
            x = x + np.maximum(layer_norm(x) @ w["w1"], 0) @ w["w2"]
        return np.stack(out)  # [layers, heads, n, n]


def indicators(att, length):
    """AAA-style row and column indicators from one sample's attention."""
    layers, heads, n, _ = att.shape
    rows = np.zeros((layers, n), np.uint8)
    cols = np.zeros((layers, n), np.uint8)
    for l in range(layers):
        a = att[l, :, :length, :length].mean(0)
        ent = -(a * np.log(np.where(a > 0, a, 1))).sum(-1)
        rows[l, :length] = ent > 0.9 * np.log(length)
        cols[l, :length] = a.mean(0) > 2.0 / length
    return rows, cols


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    model = Model(rng, a.n, a.layers, a.heads)
    lengths = np.clip(np.rint(rng.lognormal(np.log(a.n / 3), 0.5, a.samples)), 8, a.n)
    lengths = lengths.astype(np.int32)
    lengths[: max(1, a.samples // 20)] = a.n  # a few full-length samples
    shape = (a.samples, a.layers, a.heads, a.n, a.n)
    imp = np.zeros((a.heads, a.n, a.n))
    full = 0
    with h5py.File(a.out, "w") as f:
        att = f.create_dataset("attentions", shape, dtype="f2", chunks=(1,) + shape[1:])
        rows = f.create_dataset("rows", (a.samples, a.layers, a.n), dtype="u1")
        cols = f.create_dataset("cols", (a.samples, a.layers, a.n), dtype="u1")
        for i, length in enumerate(lengths):
            tokens = np.full(a.n, 2)  # padding
            tokens[:length] = rng.integers(3, len(model.words), length)
            tokens[0], tokens[length - 1] = 0, 1  # [CLS], [SEP]
            p = model.attentions(tokens, length)
            att[i] = p.astype(np.float16)
            rows[i], cols[i] = indicators(p, length)
            if length == a.n:
                imp += p[0]
                full += 1
                if full == 1:  # for `maskkit explain DATA.h5:/explain --linear tf`
                    f["explain/x"] = model.projection_input(tokens).astype(np.float32)
                    f["explain/wq"] = model.layers[0]["wq"].astype(np.float32)
                    f["explain/wk"] = model.layers[0]["wk"].astype(np.float32)
        f["lengths"] = lengths
        imp /= full
        f["importance"] = imp.astype(np.float32)
        f["logits"] = np.log(np.maximum(imp, 1e-30)).astype(np.float32)
    print(f"wrote {a.out}: {a.samples} samples of lengths {lengths.min()}..{lengths.max()} "
          f"(mean {lengths.mean():.1f}), {a.layers} layers x {a.heads} heads, N = {a.n}")


if __name__ == "__main__":
    main()
