# h5py's resizable datasets (maxshape None, chunks larger than the current
# extent: how samples are appended as they come) read like the same data
# stored plainly, in every HDF5 reader: data sets (measure, attn-stats),
# masks (gen), tensors (attn), weights (toeplitz), indicators (axis), a
# layer for explain (x, wq, wk and the biases bq, bk)
. "$(dirname "$0")/../lib.sh"
py=${PYTHON:-/usr/bin/python3}
mkdir plain && data_fixture hand plain/d.h5 || exit 1
data_fixture probs plain/p.h5 || exit 1
fix="$(dirname "$0")/../fixtures"
cp "$fix/model.h5" "$fix/axis.h5" plain/ || exit 1
"$MASKKIT" gen local1 --n 8 -o plain/m.h5 > /dev/null || exit 1
"$py" - <<'PY' || exit 1
import os, h5py, numpy as np
rng = np.random.default_rng(3)
with h5py.File("plain/q.h5", "w") as f:
    for t in "qkv":
        f[t] = rng.normal(0, 1, (2, 8, 4)).astype(np.float32)
with h5py.File("plain/x.h5", "w") as f:
    f["x"] = rng.normal(0, 1, (12, 8)).astype(np.float32)
    for t in ("wq", "wk"):
        f[t] = rng.normal(0, 1, (8, 8)).astype(np.float32)
    for t in ("bq", "bk"):
        f[t] = rng.normal(0, 1, (8,)).astype(np.float32)

def grow(src, dst):
    """Every dataset again, resizable, in chunks twice its extent plus one."""
    def copy(name, obj):
        if isinstance(obj, h5py.Dataset):
            a = obj[...]
            d = dst.create_dataset(name, shape=(0,) * a.ndim, maxshape=(None,) * a.ndim,
                                   dtype=a.dtype, chunks=tuple(2 * n + 1 for n in a.shape))
            d.resize(a.shape)
            d[...] = a
            for k, v in obj.attrs.items():
                d.attrs[k] = v
    src.visititems(copy)

os.makedirs("grow", exist_ok=True)
for name in sorted(os.listdir("plain")):
    with h5py.File("plain/" + name, "r") as s, h5py.File("grow/" + name, "w") as d:
        grow(s, d)
PY
for cmd in "measure d.h5" "attn-stats p.h5" "gen m.h5 --format txt" "toeplitz model.h5" \
	   "axis axis.h5" "attn q.h5:/q q.h5:/k q.h5:/v -o o.npy" \
	   "explain x.h5 --heads 2 --mask local2 -o e.npy"; do
	for dir in plain grow; do
		(cd $dir && $MASKKIT $cmd > out 2>&1) || { echo "$dir: $cmd failed"; cat $dir/out; exit 1; }
	done
	# attn and explain say how long they took
	grep -v ' s$' plain/out > a; grep -v ' s$' grow/out > b
	cmp -s a b || { echo "$cmd: the output differs"; diff a b | head -5; exit 1; }
	for out in o.npy e.npy; do
		[ ! -f plain/$out ] || cmp -s plain/$out grow/$out || { echo "$cmd: $out differs"; exit 1; }
	done
	rm -f plain/o.npy grow/o.npy plain/e.npy grow/e.npy
	echo "same: $cmd"
done
