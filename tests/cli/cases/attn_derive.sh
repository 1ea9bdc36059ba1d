. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# attn-derive on encode's output against numpy: the mean map over the samples
# at least M long, the AAA-style indicators (a key getting >= F / N_i of the
# attention on average, a query with entropy >= R ln N_i); then outputs that
# name the input or each other are refused (exit 2), nothing written
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model || exit 1
printf 'hello world!\nhow are you?\nhello, hello, world. how are you, world?\nhello\n' >t.txt
"$MASKKIT" encode model --text t.txt -o a.h5 --quiet >/dev/null || exit 1
"$MASKKIT" attn-derive a.h5 --mean-map m.h5 --size 4 --png m.png --layer 1 \
	--indicators i.h5 --col-factor 1.5 --row-entropy 0.8 --json >j.json || exit 1
"$py" - <<'PY'
import json
import h5py
import numpy as np
with h5py.File("a.h5", "r") as f:
    p, lens = f["attn"][()].astype(np.float64), f["lengths"][()]
j = json.load(open("j.json"))
m = 4
use = [s for s in range(len(lens)) if lens[s] >= m]
print("mean map: size", j["mean_map"]["size"], "samples", j["mean_map"]["samples"], "of", len(lens))
with h5py.File("m.h5", "r") as f:
    for l in range(p.shape[1]):
        want = p[use, l, :, :m, :m].mean(axis=0)
        got = f[f"layer_{l}"][()]
        print(f"layer_{l}", got.shape, "max diff below 1e-6:", bool(np.abs(got - want).max() < 1e-6))
rows = np.zeros(p.shape[:4], np.float32)
cols = np.zeros(p.shape[:4], np.float32)
for s, n in enumerate(lens):
    a = p[s, :, :, :n, :n]
    cols[s, :, :, :n] = a.sum(axis=2) / n >= 1.5 / n
    ent = -(np.where(a > 0, a * np.log(np.where(a > 0, a, 1)), 0)).sum(axis=3)
    rows[s, :, :, :n] = (ent >= 0.8 * np.log(n)) | (n == 1)
with h5py.File("i.h5", "r") as f:
    print("rows equal:", bool((f["rows"][()] == rows).all()), "cols equal:",
          bool((f["cols"][()] == cols).all()), "shape", f["rows"].shape)
print("png:", open("m.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n")
PY
printf 'model\nt.txt\na.h5\nm.h5\ni.h5\nm.png\nj.json\nkeep.list\n' >keep.list
cp a.h5 a.copy && echo a.copy >>keep.list
bad_input x.png "$MASKKIT" attn-derive a.h5 --mean-map x.h5 --png a.h5
cmp -s a.h5 a.copy || echo "a.h5 was changed"
bad_input y.h5 "$MASKKIT" attn-derive a.h5 --mean-map y.h5 --indicators ./y.h5
bad_input z.h5 "$MASKKIT" attn-derive a.h5 --mean-map z.h5 --png z.png --layer 9
bad_input z.h5 "$MASKKIT" attn-derive a.h5
echo done
