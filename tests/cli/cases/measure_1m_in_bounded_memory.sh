# n = 2^20 streams in O(n): under a 1 GiB address-space limit (the bit matrix
# alone would be 128 GiB) every statistic still comes out
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	echo "sanitizers reserve terabytes of address space; checked in the plain build"
	exit 77
fi
ulimit -v 1048576 || exit 1
"$MASKKIT" measure 'local2+global1' --n 1048576 --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
n = 1048576
print(d["count"] == 5 * n - 6 + 2 * n - 1 - 5, d["symmetric"], d["toeplitz"], d["rows"]["max"] == n)'
