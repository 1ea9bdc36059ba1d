# The spread of the timed runs (interleaved, kernel by kernel within each
# repetition): quartiles of each kernel's times, the paired speed-up and its
# quartiles, rank_ok and noisy_vs, the same in the CSV and the JSON; the
# warning on stderr counts the points with a row that cannot be ranked.
# Only relations are checked, never a measured time.
py=${PYTHON:-/usr/bin/python3}
"$MASKKIT" sweep --n 64 --heads 1 --patterns local,star --sparsity 0.5,0.9 --reps 5 \
	--kernels masked,block,csr -o s.json --csv s.csv 2>err || { cat err; exit 1; }
"$py" - <<'PY'
import csv, json, re
rows = json.load(open("s.json"))["results"]
c = list(csv.DictReader(l for l in open("s.csv") if not l.startswith("#")))
print("rows:", len(rows), len(c))
print("kernels:", sorted({r["kernel"] for r in rows}))
ok = all(r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] for r in rows)
print("min <= q1 <= median <= q3:", ok)
ok = all(r["speedup_q1"] <= r["speedup"] <= r["speedup_q3"] for r in rows)
print("speedup_q1 <= speedup <= speedup_q3:", ok)
print("rank_ok is a boolean, noisy_vs a list of kernels:",
      all(isinstance(r["rank_ok"], bool) and set(r["noisy_vs"]) <= {"dense", "masked", "block", "csr"}
          for r in rows))
print("rank_ok = no noisy_vs:", all(r["rank_ok"] == (not r["noisy_vs"]) for r in rows))
points = {}
for r in rows:
    points.setdefault((r["pattern"], r["param"], r["norm"]), []).append(r)
sym = all(a["kernel"] in b["noisy_vs"]
          for p in points.values() for b in p for a in p if b["kernel"] in a["noisy_vs"])
print("noisy_vs is symmetric:", sym)
same = all(x["rank_ok"] == (y["rank_ok"] == "1") and " ".join(x["noisy_vs"]) == y["noisy_vs"]
           and "%.6e" % x["q1_s"] == y["q1_s"] and "%.4f" % x["speedup_q3"] == y["speedup_q3"]
           for x, y in zip(rows, c))
print("csv same:", same)
noisy = sum(any(not r["rank_ok"] for r in p) for p in points.values())
warn = [l for l in open("err") if "too noisy" in l]
if noisy:
    m = re.match(r"maskkit: warning: (\d+) of (\d+) points too noisy to rank", warn[-1])
    print("warning counts:", m and (int(m[1]), int(m[2])) == (noisy, len(points)))
else:
    print("warning counts:", not warn)
PY
