# A safetensors tensor whose own name begins with '/': listed as '/' + its
# name ("//x.position_embeddings"), and found again by that name, by the
# normalised "/x.position_embeddings" and by --dataset. Issue 27: it was
# found, then reported as "no dataset".
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_file x.safetensors "{$(st_tensor /x.position_embeddings F32 4,2 0 32)}" 32
"$MASKKIT" toeplitz x.safetensors | head -2; echo "exit $?"
for d in /x.position_embeddings //x.position_embeddings; do
	"$MASKKIT" toeplitz x.safetensors --dataset "$d" | sed -n 2p
done
"$MASKKIT" toeplitz x.safetensors --dataset /y.position_embeddings; echo "exit $?"
