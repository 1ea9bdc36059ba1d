# config.json says 2 layers, the weights have 1
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_model m
sed "s/\"num_hidden_layers\": 1/\"num_hidden_layers\": 2/" m/config.json > c && mv c m/config.json
printf "m\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" positional m --png p.png
