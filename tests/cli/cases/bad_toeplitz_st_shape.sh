# a tensor whose bytes are not its shape times its dtype size
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_file m.safetensors "{$(st_tensor embeddings.position_embeddings.weight F16 2,2 0 16)}" 16
printf "m.safetensors\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz m.safetensors --png p.png
