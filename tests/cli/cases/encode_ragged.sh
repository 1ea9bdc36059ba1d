. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# encode --layout ragged --dtype fp16 --qk-limit 2 on a tiny BERT: the
# layout (h5py), each block's rows summing to 1 (float16: to 2e-3), the
# data read by measure and attn-stats as the padded file's, explain reading
# a sample within the limit
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'Hello, world!\n\n  \nHow are you? Hello.\nhello hello hello hello hello hello hello hello hello hello hello hello hello hello hello\n' >t.txt
for lay in padded ragged; do
	"$MASKKIT" encode model --text t.txt --sentences --qk-limit 2 --batch 2 --quiet \
		--layout $lay --dtype fp16 -o $lay.h5 >/dev/null || exit 1
done
"$py" - <<'PY' || exit 1
import h5py, numpy as np
f = h5py.File("ragged.h5", "r")
a, n, off = f["attn"], f["lengths"][()], f["offsets"][()]
print("attn", a.shape, a.dtype, a.chunks, a.compression, a.shuffle, sorted(a.attrs.items()))
print("lengths", n.tolist(), "offsets", off.tolist())
ok = all(np.allclose(a[l, off[s]:off[s + 1]].reshape(2, n[s], n[s]).astype(np.float64).sum(-1),
                     1, atol=2e-3) for s in range(len(n)) for l in range(a.shape[0]))
print("rows sum to 1:", ok)
q = f["qk/layer_1/q"]
print("q", q.shape, q.dtype, q.attrs["layout"], "k", f["qk/layer_1/k"].shape)
PY
for cmd in "measure --threshold 0.05" attn-stats; do
	"$MASKKIT" $cmd padded.h5 --json | grep -v -e '"file"' -e '"data"' >p.json
	"$MASKKIT" $cmd ragged.h5 --json | grep -v -e '"file"' -e '"data"' >r.json
	cmp -s p.json r.json && echo "$cmd: padded and ragged alike"
done
"$MASKKIT" explain ragged.h5:/qk/layer_1 --sample 1 --json | grep '"S"'
