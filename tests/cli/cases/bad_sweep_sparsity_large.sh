# above 100 a bare value is not a percentage either: no hint to make it one
"$MASKKIT" sweep --n 64 --sparsity 150
