# the hand-made P of the unit test: at sparsity 0.75 the four largest values,
# 15 14 13 12, are kept: cells (2,1) (3,3) (3,1) (1,0)
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy" 2>/dev/null || { echo "needs numpy (apt-get install python3-numpy)"; exit 77; }
"$py" -c 'import numpy as np
np.save("p.npy", np.array([9, 1, 5, 3, 12, 0, 7, 2, 4, 15, 6, 11, 8, 13, 10, 14], "f4").reshape(4, 4))'
"$MASKKIT" prune p.npy --sparsity 0.75 -o m.h5 || exit 1
"$MASKKIT" gen m.h5 || exit 1
"$MASKKIT" measure m.h5 | grep -E '^(\|M\||sparsity|toeplitz)'
