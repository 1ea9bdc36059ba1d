# two tensors sharing bytes of the data area
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_file m.safetensors "{$(st_tensor embeddings.position_embeddings.weight F32 2,2 0 16),$(st_tensor b F32 2 8 16)}" 16
printf "m.safetensors\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz m.safetensors --png p.png
