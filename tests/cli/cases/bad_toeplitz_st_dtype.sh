# a dtype maskkit does not know: refused by name (its size would be a guess)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_file m.safetensors "{$(st_tensor embeddings.position_embeddings.weight F128 2,2 0 64)}" 64
printf "m.safetensors\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz m.safetensors --png p.png
