# a PyTorch checkpoint: not loaded (a pickle), the conversion to safetensors said in one line
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
printf "PK\003\004 not really" > pytorch_model.bin
printf "pytorch_model.bin\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz pytorch_model.bin --png p.png
