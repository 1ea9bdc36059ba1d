# --json: the aggregate, by_layer and by_sample; local2 at length 2 is full
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --json --by sample | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["rows_dataset"], d["cols_dataset"], d["lengths_from"], d["local"], d["samples"], d["layers"], d["heads"], d["n"])
print(d["rho"] == 1 / 32, d["rows"], d["cols"], d["tokens"])
print([l["rows"] for l in d["by_layer"]], [s["length"] for s in d["by_sample"]], d["by_sample"][2]["rho"])'
