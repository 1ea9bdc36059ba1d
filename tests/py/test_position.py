#!/usr/bin/env python3
"""Cross-checks `maskkit toeplitz` and `maskkit positional` against an
independent numpy computation on random weights written with h5py (float16,
float32 and float64, nested groups, both checkpoint layouts), to 1e-9."""
import os
import sys
import tempfile

import h5py
import numpy as np

import checks
from checks import check, run_json

MASKKIT = os.environ["MASKKIT"]


def toeplitz_fit(a):
    """The least-squares Toeplitz fit, diagonal by diagonal (no shortcuts)."""
    n = a.shape[0]
    t = np.empty(2 * n - 1)
    rss = 0.0
    for d in range(-(n - 1), n):
        diag = np.diagonal(a, d)
        t[d + n - 1] = diag.mean()
        rss += ((diag - diag.mean()) ** 2).sum()
    tss = ((a - a.mean()) ** 2).sum()
    return 1.0 - rss / tss, rss, tss, t



def close(x, y, tol=1e-9):
    return checks.close(x, y, tol)


def check_toeplitz(tmp):
    rng = np.random.default_rng(1)
    for dtype, n, d in ((np.float64, 64, 16), (np.float32, 200, 48), (np.float16, 37, 5)):
        e = rng.standard_normal((n, d)).astype(dtype)
        path = os.path.join(tmp, f"e_{np.dtype(dtype).name}.h5")
        with h5py.File(path, "w") as f:
            f["model/deep/group/position_embeddings/embeddings:0"] = e
            f["model/other/matrix"] = np.ones((3, 3))
        e64 = e.astype(np.float64)
        p = e64 @ e64.T
        r2, rss, tss, _ = toeplitz_fit(p)
        k = min(32, n)
        r2k, _, _, _ = toeplitz_fit(p[:k, :k])
        got = run_json("toeplitz", path, "--first", str(k))
        what = f"toeplitz {np.dtype(dtype).name} n={n} d={d}"
        check(got["n"] == n and got["d"] == d, what + ": shape")
        check(got["dataset"].endswith("position_embeddings/embeddings:0"), what + ": dataset")
        check(close(got["r2"], r2), what + f": R^2 {got['r2']} vs {r2}")
        check(close(got["rss"], rss), what + f": RSS {got['rss']} vs {rss}")
        check(close(got["tss"], tss), what + f": TSS {got['tss']} vs {tss}")
        if k < n:
            check(close(got["first"]["r2"], r2k), what + f": R^2 first {k}")
        else:
            check(got["first"] is None, what + ": no leading block when K >= n")


def numpy_positional(e_p, words, wq, bq, wk, bk, heads):
    """The TISA paper's F_P per head, term by term (Eq. 9-12 plus biases)."""
    wbar = words.mean(axis=0)
    dk = wq.shape[1] // heads
    out = []
    for h in range(heads):
        c = slice(h * dk, (h + 1) * dk)
        q_p, k_p = e_p @ wq[:, c], e_p @ wk[:, c]
        a = wbar @ wq[:, c] + bq[c]
        b = wbar @ wk[:, c] + bk[c]
        f = (a @ k_p.T)[None, :] + (q_p @ b)[:, None] + q_p @ k_p.T
        out.append(f / np.sqrt(dk))
    return out


def check_positional(tmp):
    rng = np.random.default_rng(2)
    n, d, heads, vocab = 40, 24, 3, 50
    e_p = rng.standard_normal((n, d))
    words = rng.standard_normal((vocab, d)) + 0.5
    layers = [tuple(rng.standard_normal(s) for s in ((d, d), (d,), (d, d), (d,)))
              for _ in range(3)]
    for layout in ("tf", "torch"):
        path = os.path.join(tmp, f"model_{layout}.h5")
        with h5py.File(path, "w") as f:
            if layout == "tf":
                r = "m/tf_bert_model/bert/"
                f[r + "embeddings/position_embeddings/embeddings:0"] = e_p
                f[r + "embeddings/word_embeddings/weight:0"] = words
            else:
                f["bert.embeddings.position_embeddings.weight"] = e_p
                f["bert.embeddings.word_embeddings.weight"] = words
            for l, (wq, bq, wk, bk) in enumerate(layers):
                for name, w, b in (("query", wq, bq), ("key", wk, bk)):
                    if layout == "tf":
                        base = f"{r}encoder/layer_._{l}/attention/self/{name}/"
                        f[base + "kernel:0"], f[base + "bias:0"] = w, b
                    else:
                        base = f"bert.encoder.layer.{l}.attention.self.{name}."
                        f[base + "weight"], f[base + "bias"] = w.T, b
        for layer in (0, 2):
            want = numpy_positional(e_p, words, *layers[layer], heads)
            got = run_json("positional", path, "--layer", str(layer), "--heads", str(heads))
            what = f"positional {layout} layer {layer}"
            check(got["layers"] == 3 and got["heads"] == heads and got["dk"] == d // heads,
                  what + ": layers/heads")
            for h in range(heads):
                r2, rss, tss, _ = toeplitz_fit(want[h])
                g = got["per_head"][h]
                check(close(g["r2"], r2) and close(g["rss"], rss) and close(g["tss"], tss),
                      what + f" head {h}: R^2 {g['r2']} vs {r2}")
        # without biases the paper's equation holds as written
        wq, _, wk, _ = layers[1]
        zero = np.zeros(d)
        want = numpy_positional(e_p, words, wq, zero, wk, zero, heads)
        got = run_json("positional", path, "--layer", "1", "--heads", str(heads), "--no-bias")
        for h in range(heads):
            r2, _, _, _ = toeplitz_fit(want[h])
            check(close(got["per_head"][h]["r2"], r2), f"positional {layout} --no-bias head {h}")


def check_fit_recovers_tisa(tmp):
    """A positional term that is exactly a TISA kernel function of j - i
    (built with numpy as a Toeplitz matrix) is fitted with R^2 ~ 1."""
    n = 64
    i = np.arange(n)
    dd = i[None, :] - i[:, None]
    f = 2.0 * np.exp(-0.02 * (dd - 3.0) ** 2)
    path = os.path.join(tmp, "exact.h5")
    # E_P = I, W_Q = I, W_K = F^T: F_P = E_P W_Q W_K^T E_P^T = F when the mean
    # word is zero and there are no biases; sqrt(d_k) scales it
    with h5py.File(path, "w") as h:
        h["position_embeddings"] = np.eye(n)
        h["word_embeddings"] = np.zeros((4, n))
        h["layer.0.query.kernel"] = np.eye(n)
        h["layer.0.key.kernel"] = f.T.copy()
    got = run_json("positional", path, "--heads", "1", "--fit", "1")
    fit = got["per_head"][0]["fit"]
    scale = 1.0 / np.sqrt(n)
    check(close(got["per_head"][0]["r2"], 1.0, 1e-9), "exact TISA: Toeplitz R^2 = 1")
    check(fit["r2"] > 1 - 1e-6, f"exact TISA: fit R^2 {fit['r2']}")
    check(abs(fit["a"][0] - 2.0 * scale) < 1e-4 and abs(fit["b"][0] - 0.02) < 1e-4 and
          abs(fit["c"][0] - 3.0) < 1e-3, f"exact TISA: theta {fit}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_toeplitz(tmp)
        check_positional(tmp)
        check_fit_recovers_tisa(tmp)
    sys.exit(checks.summary("position cross-check"))


if __name__ == "__main__":
    main()
