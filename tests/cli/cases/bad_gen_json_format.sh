# --json prints a summary: a text format without -o would print the mask too
. "$(dirname "$0")/../lib.sh"
bad_input x.txt "$MASKKIT" gen local2 --n 8 --json --format txt
