# (local1 from a file) AND causal, then minus the diagonal: a lower bidiagonal minus diag
"$MASKKIT" gen local1 --n 6 -o l.npy &&
"$MASKKIT" compose l.npy causal --op and -o lc.json &&
"$MASKKIT" compose lc.json diag --op minus
