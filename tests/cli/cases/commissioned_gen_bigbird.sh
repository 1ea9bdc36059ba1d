# A commissioned command line, run exactly as the brief writes it:
#   maskkit gen bigbird --n 128
# a summary line (n > 64 is not printed as text) whose |M| is the count of
# the mask the same command writes with -o, read back by numpy
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$MASKKIT" gen bigbird --n 128 >out || exit 1
cat out
"$MASKKIT" gen bigbird --n 128 -o m.npy || exit 1
"$py" -c 'import numpy as np, re
m = np.load("m.npy")
count = int(re.search(r"\|M\| = (\d+)", open("out").read())[1])
print("shape", m.shape, "count agrees:", int(m.sum()) == count,
      "diagonal, first two rows and columns set:", bool(m.diagonal().all() and m[:2].all() and m[:, :2].all()))'
