# one position: nothing to fit
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/model.h5" "$(dirname "$0")/../fixtures/ambiguous.h5" "$(dirname "$0")/../fixtures/plain.h5" . && printf 'model.h5\nambiguous.h5\nplain.h5\nkeep.list\n' > keep.list
bad_input p.png "$MASKKIT" toeplitz model.h5 --dataset /bad/single_row --png p.png
