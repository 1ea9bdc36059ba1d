# -o names a .csv or .json file, --csv FILE writes the CSV and --json prints
# the table as JSON on stdout: one run may write all three, from one table
py=${PYTHON:-/usr/bin/python3}
"$MASKKIT" sweep --n 64 --patterns local --kernels dense,block --sparsity 50% --reps 1 \
	--csv s.csv -o s.json --json >out.json 2>err || { cat err; exit 1; }
grep -v '^#' s.csv | cut -d, -f1-9
"$py" -c 'import csv, json
a, b = json.load(open("out.json")), json.load(open("s.json"))
rows = list(csv.DictReader(l for l in open("s.csv") if not l.startswith("#")))
print([(r["pattern"], r["kernel"], r["target"]) for r in a["results"]])
print("json same:", a == b, "csv same:", [r["median_s"] for r in rows] ==
      ["%.6e" % r["median_s"] for r in a["results"]])'
# -o alone prints the summary, never the table (-q: nothing); --csv - alone
# prints only the CSV on stdout, the summary going to stderr
"$MASKKIT" sweep --n 64 --patterns local --kernels dense --sparsity 50% --reps 1 -o t.csv \
	2>/dev/null >summary
grep -c '^local  *50%' summary; grep -c 'pattern,param' summary
"$MASKKIT" sweep --n 64 --patterns local --kernels dense --sparsity 50% --reps 1 -o t.csv -q \
	2>/dev/null | wc -c
"$MASKKIT" sweep --n 64 --patterns local --kernels dense --sparsity 50% --reps 1 --csv - \
	2>err | grep -c '^maskkit sweep:'
grep -c '^local  *50%' err
"$MASKKIT" sweep --n 64 --patterns local --kernels dense --sparsity 50% --reps 1 --csv - \
	2>/dev/null | grep -v '^#' | cut -d, -f1-6
# no temporary file is left
ls | grep -v "^\(stdout\|stderr\|err\|summary\)$"
