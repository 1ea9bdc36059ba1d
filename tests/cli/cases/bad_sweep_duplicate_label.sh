# two --patterns that would give rows of one name (a label twice, or one
# pattern twice) are refused before anything runs: the CSV's pattern column
# (the label, else the pattern; the mask column holds the expression) names
# every row once (issue 27)
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --patterns 'a=causal,a=local1' --n 32 -o s.csv
bad_input s.csv "$MASKKIT" sweep --patterns 'local,bigbird,local' --n 32 -o s.csv
