# a directory with no weights file
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
mkdir m && printf "{}" > m/config.json
printf "m\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz m --png p.png
