"$MASKKIT" compose local2 causal --op and --n 8 --json
