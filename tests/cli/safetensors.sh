# Sourced by cases: small safetensors files written byte by byte.
# st_file OUT HEADER NBYTES [HLEN]: the 8-byte little-endian header length
# (HLEN, default the header's own length), HEADER, then NBYTES zero bytes.
st_file() {
	st_out=$1 st_n=${4:-${#2}}
	: >"$st_out"
	for st_k in 1 2 3 4 5 6 7 8; do
		printf "\\$(printf %03o $((st_n % 256)))" >>"$st_out"
		st_n=$((st_n / 256))
	done
	printf '%s' "$2" >>"$st_out"
	head -c "$3" /dev/zero >>"$st_out"
}

# st_tensor NAME DTYPE SHAPE BEGIN END: one entry of a header.
st_tensor() {
	printf '"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%s,%s]}' "$1" "$2" "$3" "$4" "$5"
}

# st_model DIR: a one-layer BERT-like model, PyTorch names, all zeros:
# 4 positions of size 2, 3 words, 2 x 2 query and key weights with biases.
st_model() {
	mkdir -p "$1"
	st_file "$1/model.safetensors" "{$(st_tensor embeddings.position_embeddings.weight F32 4,2 0 32),$(st_tensor embeddings.word_embeddings.weight F32 3,2 32 56),$(st_tensor encoder.layer.0.attention.self.query.weight F32 2,2 56 72),$(st_tensor encoder.layer.0.attention.self.key.weight F32 2,2 72 88),$(st_tensor encoder.layer.0.attention.self.query.bias F32 2 88 96),$(st_tensor encoder.layer.0.attention.self.key.bias F32 2 96 104)}" 104
	printf '{"model_type": "bert", "hidden_size": 2, "num_attention_heads": 1, "num_hidden_layers": 1, "max_position_embeddings": 4}\n' >"$1/config.json"
}
