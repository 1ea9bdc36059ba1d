. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# a tiny BERT directory (safetensors, vocab.txt): the file's layout, rows of
# P summing to 1 over the sample's tokens and zeros beyond, a line cut at
# the model's 16 positions; the data set read by measure and attn-stats,
# one sample's q and k by explain --sample
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'Hello, world!\n\n  \nHow are you? Hello.\nhello hello hello hello hello hello hello hello hello hello hello hello hello hello hello\n' >t.txt
"$MASKKIT" encode model --text t.txt --sentences --qk --batch 2 --quiet -o maps.h5 >/dev/null || exit 1
"$py" - <<'PY' || exit 1
import h5py, numpy as np
f = h5py.File("maps.h5", "r")
a, n = f["attn"], f["lengths"][()]
print("attn", a.shape, a.dtype, a.chunks, a.compression, a.shuffle)
print("lengths", n.tolist(), "ids", f["ids"].shape, f["ids"].dtype)
print("ids[0]", f["ids"][0].tolist())
print(sorted((k, v.decode() if isinstance(v, bytes) else int(v)) for k, v in f.attrs.items()))
p = a[()]
ok = all(np.allclose(p[s, :, :, :n[s], :n[s]].sum(-1), 1, atol=1e-6) and
         not p[s, :, :, n[s]:].any() and not p[s, :, :, :, n[s]:].any() for s in range(len(n)))
print("rows sum to 1, padding zero:", ok)
print("q", f["qk/layer_1/q"].shape, "k", f["qk/layer_1/k"].shape)
PY
"$MASKKIT" measure maps.h5 --threshold 0.05 --json >/dev/null || exit 1
"$MASKKIT" attn-stats maps.h5 >/dev/null || exit 1
"$MASKKIT" explain maps.h5:/qk/layer_1 --sample 2 --json | grep '"S"'
