# bf16 on the cpu backend: where the CPU has AVX512_BF16 the sweep runs,
# its rows say bf16 and every kernel's error against the double reference
# lies between float32's (1e-5: it did round) and bf16's tolerance (5e-2;
# csr stays float32); elsewhere it fails with one line saying why, writing
# nothing.  Either way the case prints the same lines.
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && grep -qw avx512bw /proc/cpuinfo; then
	"$MASKKIT" sweep --backend cpu --dtype bf16 --n 256 --sparsity 50% --patterns local \
		--reps 1 -q -o s.csv 2>err || { cat err; exit 1; }
	grep -v '^#' s.csv | tail -n +2 | cut -d, -f6,8,9
	grep -v '^#' s.csv | tail -n +2 | awk -F, '
		$6 != "csr" && ($20 <= 1e-5 || $20 > 5e-2) { print "bf16 error out of range: " $6 " " $20 }
		$6 == "csr" && $20 > 1e-4 { print "csr error: " $20 }'
else
	"$MASKKIT" sweep --backend cpu --dtype bf16 --n 256 --sparsity 50% --patterns local \
		--reps 1 -q -o s.csv 2>err && { echo "bf16 ran without AVX512_BF16"; exit 1; }
	[ $? -eq 2 ] && [ ! -e s.csv ] && grep -q 'AVX512_BF16' err || { cat err; exit 1; }
	for k in dense masked block csr; do echo "$k,cpu,bf16"; done
fi
