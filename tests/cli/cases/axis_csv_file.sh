# --csv FILE writes the groups as CSV and still prints the table; --csv -
# prints the same CSV instead of the table
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --by head --csv g.csv > table || exit 1
head -1 table
cat g.csv
"$MASKKIT" axis f.h5 --by head --csv - | cmp -s - g.csv && echo "--csv - prints the same"
"$MASKKIT" axis f.h5 --by head --csv g2.csv --json | grep -c '"by_head"'
cmp -s g.csv g2.csv && echo "and with --json too"
