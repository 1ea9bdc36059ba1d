# control characters from arguments never break the one-line error
. "$(dirname "$0")/../lib.sh"
bad_input x "$MASKKIT" gen "$(printf 'loc\nal2')" --n 8
