# the probs data set without padding (ragged): the same numbers as padded
# (measure_data_probs_by_sample), and attn-stats' JSON the same but for the
# file and dataset names
. "$(dirname "$0")/../lib.sh"; data_fixture ragged r.h5; data_fixture probs p.h5
"$MASKKIT" measure r.h5 --threshold 0.25 --by sample --csv -
"$MASKKIT" attn-stats r.h5 --json | grep -v -e '"file"' -e '"dataset"' >r.json
"$MASKKIT" attn-stats p.h5 --json | grep -v -e '"file"' -e '"dataset"' >p.json
cmp r.json p.json && echo "attn-stats: the same"
