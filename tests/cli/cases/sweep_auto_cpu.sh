# --backend auto (the default) without a usable GPU runs on the cpu, silently:
# no word of CUDA on stderr.  Skipped where a GPU is usable.
"$MASKKIT" sweep --n 64 --sparsity 50% --patterns local --kernels dense --reps 1 -q -o s.csv \
	2>err || { cat err; exit 1; }
backend=$(grep -v '^#' s.csv | tail -n 1 | cut -d, -f8)
[ "$backend" = cuda ] && { echo "a CUDA device is usable"; exit 77; }
echo "backend $backend"
grep -i 'cuda' err
exit 0
