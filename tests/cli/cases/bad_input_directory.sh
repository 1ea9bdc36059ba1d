# A directory where a file is expected: exit 2 (the input is wrong), one
# line saying so, for a mask of every format and a lengths file.
. "$(dirname "$0")/../lib.sh"
for d in d.json d.txt d.npy d.h5 len.txt; do mkdir $d; done
for m in d.json d.txt d.npy d.h5; do
	"$MASKKIT" measure $m; echo "exit $?" >&2
done
"$MASKKIT" measure 'local(w=1)' --n 8 --lengths len.txt; echo "exit $?" >&2
"$MASKKIT" attn d.npy d.npy d.npy -o o.npy; echo "exit $?" >&2
