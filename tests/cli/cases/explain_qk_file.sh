# an HDF5 group with q and k: a JSON report whose numbers hang together, and
# the same column sums whether --norm lists dnas first or second
. "$(dirname "$0")/../lib.sh"
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy, h5py" 2>/dev/null || { echo "needs numpy and h5py"; [ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1; exit 77; }
"$py" "$SRCDIR/tests/cli/fixtures/make_qk.py" good in.h5 || exit 1
"$MASKKIT" explain in.h5:/layer_0 --mask local2 --json > a.json || exit 1
"$MASKKIT" explain in.h5:/layer_0 --mask local2 --norm dnas,softmax -o b.npy > /dev/null || exit 1
"$py" - <<'PY' || exit 1
import json, numpy as np
a = json.load(open("a.json"))
b = np.load("b.npy")
assert a["S"] == 12 and a["heads"] == 2 and a["d"] == 4 and a["mask"] == "local(w=2)", a
assert [n["norm"] for n in a["norms"]] == ["softmax", "dnas"]
assert b.shape == (2, 2, 12), b.shape
for h in range(2):
    assert abs(a["norms"][1]["heads"][h]["log10_min"] - b[0, h].min()) < 1e-6
    assert abs(a["norms"][0]["heads"][h]["log10_max"] - b[1, h].max()) < 1e-6
assert all(h["above_bound"] for h in a["norms"][1]["heads"])
PY
echo ok
