. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# sweep --patterns takes any mask: a pattern alone is solved per target, an
# expression or mask file is one point at its own sparsity (checked against
# maskkit measure), LABEL=MASK names its rows, commas inside parentheses
# belong to the mask; the CSV and JSON agree
"$MASKKIT" gen 'causal' --n 96 -o m.npy --format npy || exit 1
"$MASKKIT" sweep --patterns 'local,local2+global1,m.npy,lg=local(w=3)+fixed(l=8,c=1)' \
	--n 96 --heads 1 --head-dim 8 --sparsity 0.5,0.9 --reps 1 --kernels masked,block \
	--json >s.json 2>/dev/null || exit 1
"$MASKKIT" sweep --patterns 'local2+global1,causal' --n 96 --heads 1 --head-dim 8 --reps 1 \
	--kernels masked -q -o s.csv 2>/dev/null || exit 1
for m in 'local2+global1' m.npy 'local(w=3)+fixed(l=8,c=1)' causal; do
	"$MASKKIT" measure "$m" --n 96 --json
done >measure.json 2>/dev/null
"$py" - <<'PY'
import csv, json
rows = json.load(open("s.json"))
rows = rows["results"]
dec = json.JSONDecoder()
text, ms, at = open("measure.json").read(), [], 0
while at < len(text.strip()):
    obj, at = dec.raw_decode(text, at)
    ms.append(obj)
    while at < len(text) and text[at].isspace():
        at += 1
want = {"local2+global1": ms[0]["sparsity"], "m.npy": ms[1]["sparsity"], "lg": ms[2]["sparsity"]}
points = {}
for r in rows:
    points.setdefault(r["pattern"], set()).add((r["param"], round(r["achieved"], 9)))
print("patterns:", sorted(points))
print("local: one point per target:", len(points["local"]) == 2)
for name, sp in want.items():
    p = points[name]
    print(f"{name}: one point, param empty, achieved = measure's sparsity:",
          len(p) == 1 and list(p)[0][0] == "" and abs(list(p)[0][1] - sp) < 1e-9)
print("kernels per point:", sorted({r["kernel"] for r in rows}))
c = [r for r in csv.reader(l for l in open("s.csv") if not l.startswith("#"))]
head = c[0]
got = {(r[0], r[head.index("param")], r[head.index("kernel")]) for r in c[1:]}
print("csv:", sorted(got))
print("causal achieved = measure's:", all(abs(float(r[head.index("achieved")]) - ms[3]["sparsity"]) < 1e-6
      for r in c[1:] if r[0] == "causal"))
PY
"$MASKKIT" sweep --patterns 'local,nosuch' --n 64 --reps 1; echo "exit $?"
"$MASKKIT" sweep --patterns 'm.npy' --n 64 --reps 1 >/dev/null 2>err; echo "exit $?"
grep -c 'sizes differ' err
