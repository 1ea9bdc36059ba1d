# gen/compose --heads-file --json: each head's mask and seed, and the stack's totals
printf '["local1", "random1"]' > heads.json
"$MASKKIT" compose --heads-file heads.json causal --op and --n 6 --seed 3 --json -o s.h5 || exit 1
[ -s s.h5 ] || echo "s.h5 not written" >&2
