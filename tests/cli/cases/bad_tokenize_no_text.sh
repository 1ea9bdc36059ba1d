. "$(dirname "$0")/../lib.sh"
mkdir model
printf 'model\nkeep.list\n' >keep.list
bad_input out.txt "$MASKKIT" tokenize model -o out.txt
