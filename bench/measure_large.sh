#!/bin/sh
# Every built-in pattern measured at n = 1,048,576: wall time and peak memory
# (a materialised bit matrix would need 128 GiB; streaming needs O(n)).
: "${MASKKIT:=./maskkit}"
n=${BENCH_LARGE_N:-1048576}
echo "n = $n: seconds and peak RSS of 'maskkit measure PATTERN --n $n'"
for p in full none diag causal local2 'diagonal(offsets=0,1,4)' global2 'axis(rows=0,cols=0,7)' \
	random1 star logsparse strided fixed longformer bigbird; do
	/usr/bin/time -f "%e %M" -o /tmp/mk_bench_time.$$ "$MASKKIT" measure "$p" --n "$n" --json >/tmp/mk_bench_out.$$ || exit 1
	read -r secs kib </tmp/mk_bench_time.$$
	count=$(sed -n 's/.*"count":[[:space:]]*\([0-9.e+]*\).*/\1/p' /tmp/mk_bench_out.$$ | head -1)
	printf '%-26s %8.2f s %8d MiB  |M| = %s\n' "$p" "$secs" $((kib / 1024)) "$count"
done
rm -f /tmp/mk_bench_time.$$ /tmp/mk_bench_out.$$
