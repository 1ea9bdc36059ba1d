# --sparsity as the brief writes it: 10..90 (bare numbers above 1 are
# percentages), 0.1..0.9 (fractions), 10%..90% and the default are the same
# nine targets, to the bit (the JSON's targets, which print every digit);
# 1..99 is 1%..99% in steps of 10%; a list may mix fractions and N%; a
# value 1 alone is 100%
targets() {
	"$MASKKIT" sweep --n 64 --patterns local --kernels dense --reps 1 -q --json "$@" 2>err |
		grep '"target":' | tr -d ' \t\n' || { cat err; exit 1; }
}
targets --sparsity 10..90; echo
for s in 0.1..0.9 10%..90% 10..90:10 0.1..0.9:0.1 10%..90%:10%; do
	[ "$(targets --sparsity $s)" = "$(targets --sparsity 10..90)" ] || echo "$s differs from 10..90"
done
[ "$(targets)" = "$(targets --sparsity 10..90)" ] || echo "the default differs from 10..90"
targets --sparsity 1..99; echo
targets --sparsity 0.25,90%,1; echo
targets --sparsity 25,90; echo
