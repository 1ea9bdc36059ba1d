# --csv - prints the per-head CSV instead of the table; --csv FILE writes
# the same CSV and still prints the table
"$MASKKIT" explain --random 16,4 --heads 2 --csv - > a.csv || exit 1
"$MASKKIT" explain --random 16,4 --heads 2 --csv b.csv > table || exit 1
cmp -s a.csv b.csv && echo "--csv - and --csv b.csv write the same CSV"
head -1 a.csv
wc -l < a.csv
grep -c '^input ' table
