# A commissioned command line, run exactly as the brief writes it:
#   maskkit sweep --sparsity 10..90
# nine targets (10 % to 90 %) for each of the eight default patterns, exit 0,
# the summary on standard output (a line per point, where each pattern pays
# off), the table nowhere (no -o: no file written), progress on stderr.
# About a minute in the plain build, where it runs; the sanitizers make its
# kernels several times slower and the smaller sweep cases check them there.
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	echo "the full default sweep takes minutes under the sanitizers; checked in the plain build"
	exit 77
fi
"$MASKKIT" sweep --sparsity 10..90 >out 2>err || { echo "exit $?"; tail -3 err; exit 1; }
grep -c '^[a-z]*  *[0-9]*%  *[0-9.]*%' out
for p in local strided fixed logsparse bigbird longformer star random; do
	printf '%s: ' "$p"
	grep "^$p  *[0-9]*%" out | awk '{printf "%s ", $2}'
	echo
done
grep -c '^where the mask pays off' out
grep -q 'sweep 74/74: done' err || echo "no progress on stderr"
left=$(ls | grep -v '^\(stdout\|stderr\|out\|err\)$')   # no file written
[ -z "$left" ] || echo "files written: $left"
