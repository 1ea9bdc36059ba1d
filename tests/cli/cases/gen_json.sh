# --json without -o: a JSON object describing the mask, not the mask
"$MASKKIT" gen local2 --n 8 --json
