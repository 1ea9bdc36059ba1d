# a model directory (config.json, model.safetensors with PyTorch names):
# toeplitz finds E_P, positional takes its heads from config.json
. "$(dirname "$0")/../safetensors.sh"
st_model m
"$MASKKIT" toeplitz m --json > j || exit 1
grep -q '"dataset":	"/embeddings.position_embeddings.weight",' j || { cat j; exit 1; }
"$MASKKIT" positional m --json > j || exit 1
grep -q '"heads":	1,' j && grep -q '"query":	"/encoder.layer.0.attention.self.query.weight",' j || { cat j; exit 1; }
"$MASKKIT" toeplitz m/model.safetensors > /dev/null || exit 1
echo ok
