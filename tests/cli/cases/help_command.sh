# 'maskkit help CMD' is 'maskkit CMD --help'; a mistyped command gets the
# nearest name, transpositions included
"$MASKKIT" help gen > a || exit 1
"$MASKKIT" gen --help > b || exit 1
cmp -s a b || { echo "help gen differs from gen --help"; exit 1; }
"$MASKKIT" gne
