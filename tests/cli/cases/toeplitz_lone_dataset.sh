# An .h5 whose only 2-D dataset is /pe (no 'position_embeddings' in its
# name) is read without --dataset; R^2 equals numpy's Toeplitz fit of
# P = E E^T.  With a second 2-D dataset beside it the choice is the user's
# again: the candidates are listed and --dataset named.
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$py" -c '
import numpy as np, h5py
rng = np.random.default_rng(3)
e = rng.standard_normal((24, 6))
with h5py.File("pe.h5", "w") as f:
    f["pe"] = e
    f.create_dataset("scalar", data=1.0)      # not 2-D: no candidate
    f.create_dataset("v", data=np.ones(5))    # 1-D: no candidate
p = e @ e.T
n = len(p)
t = np.zeros_like(p)
for d in range(-(n - 1), n):
    idx = np.arange(max(0, -d), min(n, n - d))
    t[idx, idx + d] = p[idx, idx + d].mean()
r2 = 1 - ((p - t) ** 2).sum() / ((p - p.mean()) ** 2).sum()
open("want", "w").write("%.9f\n" % r2)
with h5py.File("two.h5", "w") as f:
    f["pe"] = e
    f["other"] = e[:, :3]
' || exit 1
"$MASKKIT" toeplitz pe.h5 --json > j || exit 1
"$py" -c '
import json
j = json.load(open("j"))
want = float(open("want").read())
assert j["dataset"] == "/pe", j["dataset"]
assert abs(j["r2"] - want) < 1e-9, (j["r2"], want)
print("lone dataset read, R^2 as numpy")
' || exit 1
"$MASKKIT" toeplitz two.h5 2> err && { echo "two 2-D datasets: expected a refusal"; exit 1; }
grep -q "2-D datasets: /other, /pe (--dataset)" err || { cat err; exit 1; }
echo "two datasets: refused, --dataset named"
