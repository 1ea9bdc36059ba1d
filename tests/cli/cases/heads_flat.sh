# gen --heads-file with a flat list: one uint8 dataset [heads, n, n]; local1
# and global1 checked against hand counts, and every head k equal to
# 'maskkit gen EXPR_k --seed S+k' (so the two random2 heads differ)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
	echo "needs numpy and h5py (apt-get install python3-numpy python3-h5py)"; exit 77
fi
printf '["local1", "global1", "random2", "random2"]\n' > heads.json
"$MASKKIT" gen --heads-file heads.json --n 8 --seed 5 -o s.h5 || exit 1
k=0
for e in local1 global1 random2 random2; do
	"$MASKKIT" gen "$e" --n 8 --seed $((5 + k)) --format txt > head$k.txt || exit 1
	k=$((k + 1))
done
"$py" - <<'PY' || exit 1
import json, h5py, numpy as np
with h5py.File("s.h5", "r") as f:
    d = f["mask"]
    m = d[...]
    a = dict(d.attrs)
    print(d.shape, m.dtype, d.chunks)
for k in range(m.shape[0]):
    txt = np.array([[c == "#" for c in r] for r in open("head%d.txt" % k).read().split()])
    assert (m[k] == txt).all(), "head %d differs from maskkit gen" % k
i, j = np.indices((8, 8))
assert (m[0] == (abs(i - j) <= 1)).all() and m[0].sum() == 8 + 2 * 7
assert (m[1] == ((i == 0) | (j == 0))).all() and m[1].sum() == 15
assert (m[2] != m[3]).any(), "the random heads got the same stream"
print("counts", [int(x) for x in m.sum(axis=(1, 2))])
print("n", a["n"], "layers", a["layers"], "heads", a["heads"], "count", a["count"])
want = np.mean(1 - m.sum(axis=(1, 2)) / 64.0)
assert abs(a["sparsity"] - want) < 1e-15 and a["count"] == m.sum()
print("expr", json.loads(a["expr"]))
PY
