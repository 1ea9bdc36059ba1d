# positional on a file without the datasets it looks for: the error lists
# the file's 2-D datasets and names the flag that would name the missing one
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/plain.h5" . && printf 'plain.h5\nkeep.list\n' > keep.list
bad_input p.png "$MASKKIT" positional plain.h5 --heads 2 --profile p.png
