export MASKKIT_MODEL=$PWD/no-model # the synthetic model, whatever was fetched
# --json: what the report wrote, as JSON on stdout instead of the summary
# (one table here; then a missing weights file: its TISA files unmade with
# their reason, the synthetic model's made, exit 1)
"$MASKKIT" report --out D --only sparsebert-table4 --json --quiet | grep -v '"directory"'
"$MASKKIT" report --out D --only tisa --weights /nonexistent/model.h5 --json --quiet \
	2>/dev/null > tisa.json
echo "exit $?"
${PYTHON:-/usr/bin/python3} -c '
import json, sys
d = json.load(open("tisa.json"))
print(d["page"], d["made"], d["promised"], {f["made"] for f in d["files"]})
print(sum("/nonexistent/model.h5" in (f["reason"] or "") for f in d["files"]))'
