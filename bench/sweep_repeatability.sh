#!/bin/sh
# bench/sweep_repeatability.sh [OUT]: does a sweep say the same thing twice?
#
# Runs one sweep two times, back to back, and compares them point by point:
#   maskkit sweep --patterns local,bigbird --sparsity 10..90 --n 1024
#                 --kernels dense,masked,block --backend cpu
# It prints how far each speed-up moved between the runs (|B/A - 1|: the
# median, the 90th percentile and the share within 10 %), which rankings of
# two kernels at a point flipped and whether a run marked them rank_ok 0,
# and, for each run, how the ratio of the medians shown in a row agrees with
# its paired speed-up.  Exit status 0 whatever it finds: it measures, it
# does not judge (tests never assert timings).
#
#   BUSY=1   the second run beside a spinning loop pinned to one core (taskset
#            -c 1): what a busy machine changes.  A ranking that flips must
#            then be marked rank_ok 0 in the busy run.
#   MASKKIT  the program (default build/maskkit); EXTRA: more sweep options.
#
# On a quiet machine; its figures go to docs/performance.md.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
maskkit=${MASKKIT:-$here/build/maskkit}
python=${PYTHON:-python3}
out=${1:-out/sweep_repeatability}
mkdir -p "$out"
args="--patterns local,bigbird --sparsity 10..90 --n 1024 --kernels dense,masked,block --backend cpu"

run() {
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	"$maskkit" sweep $args ${EXTRA:-} -q -o "$out/$1.csv" >"$out/$1.txt"
	end=$(date +%s.%N)
	awk -v a="$start" -v b="$end" -v n="$1" 'BEGIN { printf "run %s: %.1f s\n", n, b - a }' \
		>>"$out/times.txt"
}

: >"$out/times.txt"
echo "== run A (quiet)"
run a
spin=
if [ -n "${BUSY:-}" ]; then
	taskset -c 1 sh -c 'while :; do :; done' &
	spin=$!
	trap 'kill $spin 2>/dev/null' EXIT INT TERM
	echo "== run B (beside a spinning loop on core 1, pid $spin)"
else
	echo "== run B (quiet)"
fi
run b
[ -n "$spin" ] && kill "$spin" 2>/dev/null
cat "$out/times.txt"

"$python" - "$out/a.csv" "$out/b.csv" "${BUSY:-}" <<'PY'
import csv, statistics, sys

def read(path):
    rows = list(csv.DictReader(l for l in open(path) if not l.startswith("#")))
    points = {}
    for r in rows:
        points.setdefault((r["pattern"], r["target"], r["norm"]), {})[r["kernel"]] = r
    return rows, points

rows_a, a = read(sys.argv[1])
rows_b, b = read(sys.argv[2])
busy = bool(sys.argv[3])

moves = []
for key in a:
    for k, ra in a[key].items():
        rb = b.get(key, {}).get(k)
        if k == "dense" or rb is None:
            continue
        moves.append((abs(float(rb["speedup"]) / float(ra["speedup"]) - 1), key, k, ra, rb))
moves.sort(key=lambda m: m[0])
d = [m[0] for m in moves]
within = sum(x <= 0.10 for x in d)
print(f"speed-ups compared: {len(d)}; |B/A - 1|: median {100 * statistics.median(d):.1f} %, "
      f"90th percentile {100 * d[int(0.9 * (len(d) - 1))]:.1f} %, largest {100 * d[-1]:.1f} %; "
      f"within 10 %: {within} of {len(d)} ({100 * within / len(d):.0f} %)")
print("the five that moved most (pattern, target, kernel: A [interval], B [interval]):")
for x, key, k, ra, rb in moves[-5:][::-1]:
    print(f"  {key[0]} {float(key[1]):.0%} {k}: {float(ra['speedup']):.3f} "
          f"[{float(ra['speedup_lo']):.3f}, {float(ra['speedup_hi']):.3f}], "
          f"{float(rb['speedup']):.3f} [{float(rb['speedup_lo']):.3f}, "
          f"{float(rb['speedup_hi']):.3f}]  ({100 * x:.1f} %)")

flips = flagged_a = flagged_b = 0
pairs = 0
for key in a:
    ka = a[key]
    kb = b.get(key, {})
    names = sorted(set(ka) & set(kb))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            p, q = names[i], names[j]
            pairs += 1
            sa = float(ka[p]["speedup"]) - float(ka[q]["speedup"])
            sb = float(kb[p]["speedup"]) - float(kb[q]["speedup"])
            if sa * sb > 0:
                continue
            flips += 1
            fa = ka[p]["rank_ok"] == "0" or ka[q]["rank_ok"] == "0"
            fb = kb[p]["rank_ok"] == "0" or kb[q]["rank_ok"] == "0"
            flagged_a += fa
            flagged_b += fb
            mark = "ok" if (fb if busy else (fa or fb)) else "NOT FLAGGED"
            print(f"  flip: {key[0]} {float(key[1]):.0%} {p} vs {q}: A "
                  f"{float(ka[p]['speedup']):.3f}/{float(ka[q]['speedup']):.3f} "
                  f"(rank_ok {ka[p]['rank_ok']}{ka[q]['rank_ok']}), B "
                  f"{float(kb[p]['speedup']):.3f}/{float(kb[q]['speedup']):.3f} "
                  f"(rank_ok {kb[p]['rank_ok']}{kb[q]['rank_ok']}): {mark}")
print(f"rankings (pairs of kernels at a point, dense included): {pairs}; flipped: {flips}; "
      f"marked rank_ok 0 in run A: {flagged_a}, in run B: {flagged_b}")

for name, rows in (("A", rows_a), ("B", rows_b)):
    diffs, outside, ok = [], 0, 0
    for r in rows:
        if r["kernel"] == "dense":
            continue
        rom = float(r["dense_s"]) / float(r["median_s"])
        diffs.append(abs(rom / float(r["speedup"]) - 1))
        if r["rank_ok"] == "1":
            ok += 1
            outside += not (float(r["speedup_lo"]) * (1 - 1e-5) <= rom <=
                            float(r["speedup_hi"]) * (1 + 1e-5))
    reps = [int(r["reps"]) for r in rows]
    print(f"run {name}: rows {len(rows)}, rank_ok {sum(r['rank_ok'] == '1' for r in rows)}; "
          f"dense_s/median_s vs speedup: median difference {100 * statistics.median(diffs):.2f} %, "
          f"rank_ok rows outside their interval: {outside} of {ok}; reps median "
          f"{statistics.median(reps):g} (min {min(reps)}, max {max(reps)}); "
          f"dense baseline {1e3 * float(rows[0]['dense_baseline_s']):.2f} ms")
PY
