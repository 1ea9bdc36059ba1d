# a switch given a value
"$MASKKIT" gen local2 --n 8 --json=1
