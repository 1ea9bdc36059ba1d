# config.json with a key twice (cJSON would read the first value, Python and
# transformers the last) or text after its object is refused with one line,
# exit 2, naming the file: one JSON rule for every JSON input (issue 27)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_model m
printf 'm\nkeep.list\n' >keep.list
printf '{"model_type": "bert", "hidden_size": 2, "num_attention_heads": 1, "num_hidden_layers": 2, "num_hidden_layers": 1, "max_position_embeddings": 4}\n' >m/config.json
bad_input p.png "$MASKKIT" positional m --png p.png
echo "exit $?"
printf '{"model_type": "bert", "hidden_size": 2, "num_attention_heads": 1, "num_hidden_layers": 1, "max_position_embeddings": 4}\n{}\n' >m/config.json
bad_input p.png "$MASKKIT" positional m --png p.png
echo "exit $?"
