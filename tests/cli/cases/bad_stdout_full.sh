# a failed write to standard output: one line on stderr, exit 1 (a system error)
"$MASKKIT" gen local1 --n 8 >/dev/full
