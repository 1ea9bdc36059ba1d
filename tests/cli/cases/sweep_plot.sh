# --png draws time against sparsity through gnuplot (templates/sweep.gp)
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
"$MASKKIT" sweep --n 128 --sparsity 30..90:30 --patterns local,strided --reps 1 -q \
	-o s.csv --png s.png 2>err || { cat err; exit 1; }
od -An -tx1 -N8 s.png | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "not a PNG"; exit 1; }
"$MASKKIT" sweep --n 64 --sparsity 0.5 --patterns local --kernels dense --reps 1 -q \
	-o d.csv --png d.png 2>err || { cat err; exit 1; }
echo ok
