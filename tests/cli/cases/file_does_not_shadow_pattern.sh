# a file named like a pattern does not replace the pattern; a mask file does work as an operand
touch causal && "$MASKKIT" gen causal --n 3 && "$MASKKIT" gen diag --n 3 -o d.npy && "$MASKKIT" compose d.npy 'D.NPY+local1' --op and 2>&1 | head -1
