. "$(dirname "$0")/../lib.sh"
# a mask file's cells have no index arithmetic: flex-py refuses it, writing nothing
"$MASKKIT" gen local1 --n 8 -o m.npy || exit 1
printf 'm.npy\nkeep.list\n' > keep.list
bad_input mod.py "$MASKKIT" gen 'm.npy+causal' -o mod.py
