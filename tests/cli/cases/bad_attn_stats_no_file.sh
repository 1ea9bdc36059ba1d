. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; bad_input p.csv "$MASKKIT" attn-stats --profile-csv p.csv
