# -o FILE.h5:/dataset adds that dataset to an existing FILE.h5, or replaces
# the dataset of that name, keeping every other dataset, group and attribute
# (it used to replace the whole file, inputs and all); the same for explain,
# which writes through the same writer, and for plain FILE.h5 (dataset O)
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$py" -c '
import numpy as np, h5py
rng = np.random.default_rng(3)
with h5py.File("store.h5", "w") as f:
    f["q"] = rng.standard_normal((2, 6, 4)).astype("f4")
    f["v"] = rng.standard_normal((2, 6, 4))
    f["g/x"] = np.arange(5)
    f["g"].attrs["note"] = "kept"
    f.attrs["top"] = 7
    f["alias"] = h5py.SoftLink("/g/x")
' || exit 1
"$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/v -o store.h5:/O >/dev/null || exit 1
"$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o store.h5:/out/O2 >/dev/null || exit 1
# replacing: /O again, now from Q, Q, Q
"$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o store.h5:/O >/dev/null || exit 1
"$MASKKIT" explain --q store.h5:/q --k store.h5:/q -o store.h5:/sums >/dev/null || exit 1
"$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o store.h5 >/dev/null || exit 1
"$py" - <<'PY' || exit 1
import numpy as np, h5py
rng = np.random.default_rng(3)
q = rng.standard_normal((2, 6, 4)).astype("f4")
v = rng.standard_normal((2, 6, 4))
def attn(q, k, v):
    s = q.astype("f8") @ k.astype("f8").transpose(0, 2, 1) / 2.0
    p = np.exp(s - s.max(axis=2, keepdims=True))
    return (p / p.sum(axis=2, keepdims=True)) @ v
with h5py.File("store.h5", "r") as f:
    names = []
    f.visit(names.append)
    print(sorted(names))
    assert (f["q"][...] == q).all() and (f["v"][...] == v).all()
    assert (f["g/x"][...] == np.arange(5)).all() and f["alias"][...].sum() == 10
    assert f["g"].attrs["note"] == "kept" and f.attrs["top"] == 7
    assert f["O"].dtype == "f4" and f["O"].shape == (2, 6, 4)
    assert np.allclose(f["O"][...], attn(q, q, q), atol=1e-5)
    assert np.allclose(f["out/O2"][...], attn(q, q, q), atol=1e-5)
    print("sums", f["sums"].shape, f["sums"].dtype)
PY
