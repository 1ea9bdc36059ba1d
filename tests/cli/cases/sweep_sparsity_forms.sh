# --sparsity takes fractions or percentages: 0.1..0.9, 10%..90%:10% and the
# default are the same nine targets (0.1..0.9 once ran one point at 0 %); a
# list may mix the two; --csv - prints the CSV
targets() {
	"$MASKKIT" sweep --n 64 --patterns local --kernels dense --reps 1 "$@" 2>err || { cat err; exit 1; }
}
targets --sparsity 0.1..0.9 --csv - | grep -v '^#' | cut -d, -f3 | tr '\n' ' '; echo
targets --sparsity 10%..90%:10% --csv - | grep -v '^#' | cut -d, -f3 | tr '\n' ' '; echo
targets --csv - | grep -v '^#' | cut -d, -f3 | tr '\n' ' '; echo
targets --sparsity 0.25,90%,1 | grep -v '^#' | cut -d, -f3,4 | tr '\n' ' '; echo
