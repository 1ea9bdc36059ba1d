# a --png (or -o) in a missing directory is refused before the sweep runs
. "$(dirname "$0")/../lib.sh"
bad_input s.csv "$MASKKIT" sweep --n 64 --reps 1 --patterns local --sparsity 50% -o s.csv --png missing/s.png
