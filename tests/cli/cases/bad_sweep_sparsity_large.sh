# above 100 a bare number is no percentage either
"$MASKKIT" sweep --n 64 --sparsity 150
