# gen --heads-file with a list of lists: [layers, heads, n, n], counts by hand
# (n = 6: local1 6 + 2*5, causal 21, global1 11, local2&causal 1+2+3*4)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
	echo "needs numpy and h5py (apt-get install python3-numpy python3-h5py)"; exit 77
fi
printf '[["local1", "causal"],\n ["global1", "local2&causal"]]\n' > heads.json
"$MASKKIT" gen --heads-file heads.json --n 6 -o s.h5 || exit 1
"$py" - <<'PY' || exit 1
import h5py
with h5py.File("s.h5", "r") as f:
    d = f["mask"]
    m = d[...]
    print(d.shape, m.dtype, d.chunks)
    print("counts", m.sum(axis=(2, 3)).tolist())
    print("layers", d.attrs["layers"], "heads", d.attrs["heads"], "count", d.attrs["count"])
    print("sparsity %.12f" % d.attrs["sparsity"])
    print("expr", d.attrs["expr"])
PY
