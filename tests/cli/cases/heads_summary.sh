# gen --heads-file without -o prints |M| and the sparsity of every head
printf '[["local1", "causal"], ["global1", "local2&causal"]]' > heads.json
"$MASKKIT" gen --heads-file heads.json --n 6
