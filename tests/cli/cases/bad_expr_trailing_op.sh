. "$(dirname "$0")/../lib.sh"
bad_input out.json "$MASKKIT" gen 'local2+' --n 8 -o out.json
