# no --heads and no config.json: positional asks rather than guess
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/model.h5" "$(dirname "$0")/../fixtures/ambiguous.h5" "$(dirname "$0")/../fixtures/plain.h5" . && printf 'model.h5\nambiguous.h5\nplain.h5\nkeep.list\n' > keep.list
bad_input p.png "$MASKKIT" positional model.h5  --png p.png
