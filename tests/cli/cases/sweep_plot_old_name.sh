# --plot is the old name of --png: it still draws, with a note on stderr
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
"$MASKKIT" sweep --n 64 --sparsity 50% --patterns local --kernels dense --reps 1 -q \
	-o d.csv --plot d.png 2>err || { cat err; exit 1; }
grep '^maskkit: note' err
od -An -tx1 -N8 d.png | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' || { echo "not a PNG"; exit 1; }
echo ok
