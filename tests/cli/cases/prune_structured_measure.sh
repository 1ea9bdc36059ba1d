# DAM_s on a Toeplitz P that favours near and past keys: without the border
# the mask is whole diagonals, which measure calls Toeplitz; with the border
# (rows and columns 0 and n-1 kept) it is Toeplitz on the interior only
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy" 2>/dev/null || { echo "needs numpy (apt-get install python3-numpy)"; exit 77; }
"$py" -c 'import numpy as np
i, j = np.indices((10, 10))
np.save("p.npy", (1 / (1 + abs(j - i)) + 0.01 * (j < i)).astype("f4"))'
for b in --no-border ""; do
	"$MASKKIT" prune p.npy --structured $b --sparsity 0.5 -o m.h5 | tail -2 || exit 1
	"$MASKKIT" measure m.h5 | grep -E '^(\|M\||sparsity|toeplitz)' || exit 1
	"$MASKKIT" gen m.h5 || exit 1
done
