# '-' is standard output only for the options that say so (--csv -, --json);
# for the others it used to make a file named "-", which the output=input
# check skipped (a mask file named "-" could be replaced by gen ./- -o -).
# Now refused before anything runs: exit 2, one line, no file made.
. "$(dirname "$0")/../lib.sh"
for fmt in txt h5; do
	"$MASKKIT" gen causal --n 4 --format $fmt -o -; echo "gen --format $fmt: exit $?"
done
"$MASKKIT" gen causal --n 4 --format txt -o ./- || exit 1
cp ./- keep
"$MASKKIT" gen "./- + diag" -o -; echo "gen ./- -o -: exit $?"
cmp -s ./- keep && echo "the input is intact"
"$MASKKIT" sweep --n 16 --patterns local --sparsity 50% --reps 1 --png -; echo "sweep --png -: exit $?"
# --csv - is standard output, as documented
"$MASKKIT" sweep --n 16 --patterns local --kernels dense --sparsity 50% --reps 1 --csv - \
	2>/dev/null | grep -c '^local,'
ls | grep -v "^\(stdout\|stderr\)$"
