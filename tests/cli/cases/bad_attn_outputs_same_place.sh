# -o and --weights-out must not write the same place: the same file by any
# spelling of its folder, or the same dataset of one HDF5 file however its
# path is written (refused, exit 2, nothing written); O and pi as two
# datasets of one file are fine.
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 8 4
mkdir sub && echo sub >>keep.list
for pair in "o.npy ./o.npy" "sub/../o.npy o.npy" "s.h5:/x ./s.h5://x" "s.h5:/g/x s.h5:g//x"; do
	set -- $pair
	bad_input "${1%%:*}" "$MASKKIT" attn q.npy k.npy v.npy -o "$1" --weights-out "$2"
	echo "exit $?" >&2
done
"$MASKKIT" attn q.npy k.npy v.npy -o s.h5 --weights-out s.h5 >/dev/null
echo "O and pi in one file: exit $?" >&2
h5ls s.h5 | awk '{print $1}' >&2
