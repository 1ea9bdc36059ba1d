. "$(dirname "$0")/../lib.sh"
"${PYTHON:-/usr/bin/python3}" "$(dirname "$0")/../fixtures/make_npz.py" truncated l.npz || exit 1
printf 'l.npz\nkeep.list\n' > keep.list
bad_input out.npy "$MASKKIT" gen l.npz -o out.npy
