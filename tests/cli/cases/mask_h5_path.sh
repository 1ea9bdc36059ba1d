# FILE.h5:/PATH names a mask's dataset wherever a mask is read: as an operand
# of gen, compose and measure, inside an expression, and in attn --mask
"$MASKKIT" gen "local(w=1)" --n 8 -o m.h5 || exit 1
"$MASKKIT" gen m.h5 > plain || exit 1
"$MASKKIT" gen m.h5:/mask > named || exit 1
cmp -s plain named || { echo "m.h5 and m.h5:/mask differ"; exit 1; }
"$MASKKIT" compose m.h5:/mask causal --op and --json | grep '"count"'
"$MASKKIT" measure "m.h5:/mask & causal" | sed -n 3,4p
"$MASKKIT" gen m.h5:/nope
echo "exit $?"
