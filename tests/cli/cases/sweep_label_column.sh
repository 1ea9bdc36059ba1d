# LABEL=MASK: the row's name (the pattern column) is the label, the mask
# column the expression, and the label column the label given (empty when
# none), in the CSV and the JSON alike (issue 27: two rows both named "a"
# could not be told apart; a label twice is refused, bad_sweep_duplicate_label)
py=${PYTHON:-/usr/bin/python3}
"$MASKKIT" sweep --n 32 --patterns 'a=causal,local,w_2.x-y=local(w=2)' --kernels dense \
	--sparsity 50% --reps 1 -o s.csv --json >s.json 2>err || { cat err; exit 1; }
"$py" -c 'import csv, json
rows = list(csv.DictReader(l for l in open("s.csv") if not l.startswith("#")))
for r in rows:
    print(r["pattern"], r["mask"], repr(r["label"]))
j = json.load(open("s.json"))["results"]
print("json:", [(r["pattern"], r["label"]) for r in j])'
