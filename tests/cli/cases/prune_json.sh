# --json: one object, a level per target and a head per head of P
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy" 2>/dev/null || { echo "needs numpy (apt-get install python3-numpy)"; exit 77; }
"$py" -c 'import numpy as np
h, i, j = np.indices((3, 5, 5))
np.save("p.npy", ((i - j) * (h + 1) % 7).astype("f4"))'
"$MASKKIT" prune p.npy --structured --sparsity 0.3,0.7 -o 'j{}.h5' --json | "$py" -c '
import json, sys
d = json.load(sys.stdin)
print(d["mode"], d["border"], d["heads"], d["n"], d["rank"])
for l in d["levels"]:
    print(l["target"], l["output"], [(h["kept"], h["diagonals"], h["toeplitz"], h["toeplitz_interior"]) for h in l["heads"]])'
