# a safetensors file cut inside its header: the header length runs past the end
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_file m.safetensors "{$(st_tensor embeddings.position_embeddings.weight F32 2,2 0 16)}" 0 200
printf "m.safetensors\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" toeplitz m.safetensors --png p.png
