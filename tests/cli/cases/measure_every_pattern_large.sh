# every built-in pattern measured at n = 2^18, and three at n = 2^20, under a
# 1 GiB address-space limit (their bit matrices would need 8 and 128 GiB),
# with the count checked where a closed form exists; runs in the plain build
# only.  Streaming costs about 20 s a pattern at 2^20 on 2 cores whatever
# the pattern (every row's bits are made and read): 2^18 for most keeps the
# case near a minute.
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	echo "sanitizers reserve terabytes of address space; checked in the plain build"
	exit 77
fi
ulimit -v 1048576 || exit 1
export OMP_NUM_THREADS=2
check() {
	/usr/bin/python3 -c '
import json, sys
n = int(sys.argv[1])
lg = n.bit_length() - 1
closed = {"full": n * n, "none": 0, "diag": n, "causal": n * (n + 1) // 2, "local2": 5 * n - 6,
          "diagonal(offsets=0,1,4)": n + 2 * (n - 1) + 2 * (n - 4), "global2": 2 * (2 * n - 2),
          "axis(rows=0,cols=0,7)": n + 2 * (n - 1), "random1": 2 * n, "star": 5 * n - 6,
          "logsparse": n + 2 * sum(n - (1 << k) for k in range(lg))}
for d in json.load(sys.stdin):
    want = closed.get(d["expr"])
    print(lg, d["expr"], d["n"] == n and (want is None or d["count"] == want))' "$1"
}
"$MASKKIT" measure --n 262144 --json full none diag causal local2 'diagonal(offsets=0,1,4)' \
	global2 'axis(rows=0,cols=0,7)' random1 star logsparse strided fixed longformer bigbird |
	check 262144
"$MASKKIT" measure --n 1048576 --json full causal logsparse | check 1048576
