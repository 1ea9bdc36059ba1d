. "$(dirname "$0")/../lib.sh"
bad_input out.json "$MASKKIT" gen '(local3+global1&causal' --n 8 -o out.json
