# three levels from one P of two heads: one file per level, named by '{}';
# the masks of an entry ranking are nested, so |M| falls level by level
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy" 2>/dev/null || { echo "needs numpy (apt-get install python3-numpy)"; exit 77; }
"$py" -c 'import numpy as np
h, i, j = np.indices((2, 6, 6))
np.save("p.npy", ((7 * i + 5 * j + 3 * h) % 11 / 10).astype("f4"))'
"$MASKKIT" prune p.npy --sparsity 0.1..0.9:0.4 -o 'lv-{}.h5' || exit 1
ls lv-*.h5
