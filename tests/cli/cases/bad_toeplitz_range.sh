# --range values that are not LO:HI, minmax or pN: one line, exit 2, no picture
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/model.h5" . && printf 'model.h5\nkeep.list\n' > keep.list
for r in 2:1 p50 p-1 1: abc nan:1; do
	bad_input p.png "$MASKKIT" toeplitz model.h5 --png p.png --range "$r"
	echo "exit $?" >&2
done
bad_input heads.png "$MASKKIT" positional model.h5 --heads 2 --png heads.png --range 1:1
