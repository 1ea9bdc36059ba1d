"$MASKKIT" measure --json --n 16 causal | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["n"], d["count"], d["causal"], d["symmetric"], d["toeplitz"], d["rows"]["min"], d["rows"]["max"])
print([(t["block"], t["nonempty"], t["full"]) for t in d["tiles"]])'
