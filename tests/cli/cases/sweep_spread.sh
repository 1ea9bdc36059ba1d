# The spread of the timed runs (interleaved, kernel by kernel within each
# repetition): quartiles of each kernel's times, the paired speed-up and its
# 95% interval, reps, agree, rank_ok and noisy_vs, the same in the CSV and
# the JSON; the summary's verdicts follow from the intervals.  Only
# relations are checked, never a measured time.
py=${PYTHON:-/usr/bin/python3}
"$MASKKIT" sweep --n 64 --heads 1 --patterns local,star --sparsity 0.5,0.9 --max-time 0.05 \
	--kernels dense,masked,block,csr -o s.json --csv s.csv >summary 2>err || { cat err; exit 1; }
"$py" - <<'PY'
import csv, json, re
doc = json.load(open("s.json"))
rows = doc["results"]
c = list(csv.DictReader(l for l in open("s.csv") if not l.startswith("#")))
print("rows:", len(rows), len(c))
print("kernels:", sorted({r["kernel"] for r in rows}))
print("rule:", doc["min_reps"], doc["max_reps"], doc["precision"], doc["max_time_s"], doc["warmup"])
ok = all(r["min_s"] <= r["q1_s"] <= r["median_s"] <= r["q3_s"] for r in rows)
print("min <= q1 <= median <= q3:", ok)
ok = all(r["speedup_lo"] <= r["speedup"] <= r["speedup_hi"] for r in rows)
print("speedup_lo <= speedup <= speedup_hi:", ok)
print("dense: speed-up 1 [1, 1]:", all((r["speedup"], r["speedup_lo"], r["speedup_hi"]) == (1, 1, 1)
                                      for r in rows if r["kernel"] == "dense"))
print("reps within the rule:", all(3 <= r["reps"] <= doc["max_reps"] for r in rows))
print("rank_ok is a boolean, noisy_vs a list of kernels:",
      all(isinstance(r["rank_ok"], bool) and set(r["noisy_vs"]) <= {"dense", "masked", "block", "csr"}
          for r in rows))
print("rank_ok = no noisy_vs, agree and 6 runs:",
      all(r["rank_ok"] == (not r["noisy_vs"] and r["agree"] and r["reps"] >= 6) for r in rows))
points = {}
for r in rows:
    points.setdefault((r["pattern"], r["param"], r["norm"]), []).append(r)
sym = all(a["kernel"] in b["noisy_vs"]
          for p in points.values() for b in p for a in p if b["kernel"] in a["noisy_vs"])
print("noisy_vs is symmetric:", sym)
overlap = lambda a, b: a["speedup_lo"] <= b["speedup_hi"] and b["speedup_lo"] <= a["speedup_hi"]
print("noisy_vs = the kernels whose intervals overlap (dense: [1, 1]):",
      all((b["kernel"] in a["noisy_vs"]) == overlap(a, b)
          for p in points.values() for a in p for b in p if a is not b))
print("agree = dense_s / median_s within the interval:",
      all(r["agree"] == (r["speedup_lo"] * (1 - 1e-5) <= r["dense_s"] / r["median_s"] <=
                         r["speedup_hi"] * (1 + 1e-5)) for r in rows))
same = all(x["rank_ok"] == (y["rank_ok"] == "1") and " ".join(x["noisy_vs"]) == y["noisy_vs"]
           and "%.6e" % x["q1_s"] == y["q1_s"] and "%.6f" % x["speedup_hi"] == y["speedup_hi"]
           and str(x["reps"]) == y["reps"] and x["mask"] == y["mask"]
           for x, y in zip(rows, c))
print("csv same:", same)
base = sorted({r["dense_baseline_s"] for r in rows})
print("one dense baseline:", len(base) == 1 and min(r["dense_s"] for r in rows) <= base[0] <=
      max(r["dense_s"] for r in rows))
# the summary: a line per point, its verdict from the best kernel's interval
# pattern target achieved tiles best speed-up [lo, hi] reps verdict...: the
# interval's brackets are padded ("[ 0.97, 12.03]", "[12.30, 15.00]"), so the
# fields are read by their shape, not counted by spaces
line = re.compile(r"(local|star) +(\d+%) +\S+ +\S+ +(\S+) +(\S+x) +\[ *([\d.]+), *([\d.]+)\] +"
                  r"(\d+) +(\S+)")
lines = [m.groups() for m in map(line.match, open("summary")) if m]
best = {}
for p in points.values():
    b = max((r for r in p if r["kernel"] != "dense"), key=lambda r: r["speedup"])
    best[(p[0]["pattern"], round(100 * p[0]["target"]))] = b
good = len(lines) == 4
for l in lines:
    b = best[(l[0], int(l[1][:-1]))]
    # a kernel whose dense run disagrees with the baseline is "unsure"
    # whatever its interval (mk_sweep_row_verdict): under load it happens
    v = ("unsure" if not b["agree"] else "faster" if b["speedup_lo"] > 1 and b["reps"] >= 6
         else "slower" if b["speedup_hi"] < 1 and b["reps"] >= 6 else None)
    good &= l[2] == b["kernel"] and l[3] == "%.2fx" % b["speedup"] and (v is None or l[7] == v)
print("summary: a line per point, the best kernel, its speed-up and verdict:", good)
PY
