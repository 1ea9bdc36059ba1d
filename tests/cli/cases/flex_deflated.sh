# a layout with deflated members (as np.savez_compressed writes them), made
# with Python's zipfile: query block 0 sees key blocks 0 and 1, block 1 sees 1
"${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/../fixtures/make_npz.py" deflated l.npz || exit 1
"$MASKKIT" gen l.npz
