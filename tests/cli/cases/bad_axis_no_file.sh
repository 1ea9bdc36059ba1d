# no operand
"$MASKKIT" axis --json
