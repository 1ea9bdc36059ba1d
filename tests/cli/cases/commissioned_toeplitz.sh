# A commissioned command line, run exactly as the brief writes it:
#   maskkit toeplitz albert_pe.h5
# on an HDF5 file holding a trained position-embedding matrix: the real
# all-MiniLM-L6-v2's 512 x 384 (MASKKIT_MODEL or the cache quickstart.sh
# fills), else keras-bert's toy-trained 20 x 25 from ../shared/data; R^2 of
# the Toeplitz fit of P = E E^T checked against numpy
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
model=${MASKKIT_MODEL:-${XDG_CACHE_HOME:-$HOME/.cache}/maskkit/all-MiniLM-L6-v2}
keras="${SHARED_DATA:-$SRCDIR/../shared/data}/keras-bert/test_bert_fit.h5"
"$py" - "$model/model.safetensors" "$keras" <<'PY'
import json, os, struct, sys
import h5py, numpy as np
st, keras = sys.argv[1:3]
if os.path.exists(st):
    with open(st, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        head = json.loads(f.read(n))
        key = next(k for k in head if k.endswith("position_embeddings.weight"))
        a, b = head[key]["data_offsets"]
        f.seek(8 + n + a)
        e = np.frombuffer(f.read(b - a), "<f4").reshape(head[key]["shape"])
elif os.path.exists(keras):
    e = h5py.File(keras, "r")["model_weights/Embedding-Position/Embedding-Position/embeddings:0"][()]
else:
    sys.exit(3)
h5py.File("albert_pe.h5", "w")["position_embeddings"] = e
PY
# exit 3: neither file, a skip (an '|| exit 1' after the script would make it a failure)
st=$?
[ $st = 3 ] && { echo "no trained position embeddings (no model, no ../shared/data)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1; exit 77; }
[ $st = 0 ] || exit 1
"$MASKKIT" toeplitz albert_pe.h5 >out || exit 1
"$py" - <<'PY'
import re
import h5py, numpy as np
e = h5py.File("albert_pe.h5", "r")["position_embeddings"][()].astype(np.float64)
p = e @ e.T
n = p.shape[0]
fit = np.zeros_like(p)
for d in range(-n + 1, n):
    idx = np.arange(max(0, -d), min(n, n - d))
    fit[idx, idx + d] = p[idx, idx + d].mean()
r2 = 1 - ((p - fit) ** 2).sum() / ((p - p.mean()) ** 2).sum()
got = float(re.search(r"R\^2 +([0-9.eE+-]+)", open("out").read())[1])
print("R^2 as numpy computes it:", abs(got - r2) < 1e-6, "n x d line:", bool(re.search(r"n x d +%d x %d" % e.shape, open("out").read())))
PY
