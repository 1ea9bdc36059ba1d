. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
qkv 6 4; echo hello > x.h5; echo x.h5 >> keep.list
bad_input p.csv "$MASKKIT" attn-stats x.h5 --profile-csv p.csv
