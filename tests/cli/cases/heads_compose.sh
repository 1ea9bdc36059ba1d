# compose --heads-file H causal --op and: every head's mask AND causal
# (n = 5: local1&causal 5 + 4, global1&causal the first column, 5)
py=${PYTHON:-/usr/bin/python3}
if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
	echo "needs numpy and h5py (apt-get install python3-numpy python3-h5py)"; exit 77
fi
printf '["local1", "global1"]' > heads.json
"$MASKKIT" compose --heads-file heads.json causal --op and --n 5 -o s.h5 || exit 1
"$py" - <<'PY' || exit 1
import h5py, numpy as np
with h5py.File("s.h5", "r") as f:
    m = f["mask"][...]
    print(m.shape, "counts", m.sum(axis=(1, 2)).tolist(), f["mask"].attrs["expr"])
i, j = np.indices((5, 5))
assert (m[0] == ((j <= i) & (i - j <= 1))).all()
assert (m[1] == (j == 0)).all()
PY
