# a config.json that disagrees with the weights describes another model
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
st_model m
sed "s/\"hidden_size\": 2/\"hidden_size\": 4/" m/config.json > c && mv c m/config.json
printf "m\nkeep.list\n" > keep.list
bad_input p.png "$MASKKIT" positional m --png p.png
