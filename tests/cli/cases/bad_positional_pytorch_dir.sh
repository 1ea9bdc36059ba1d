# a model directory with only pytorch_model.bin: the conversion said in one line
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
mkdir m && printf "\200\002}q\000." > m/pytorch_model.bin && printf "{}" > m/config.json
printf "m\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" positional m --png p.png
