# the toys' --csv - prints the CSV --csv FILE writes, instead of the table,
# and leaves no temporary file behind
mkdir tmp
TMPDIR=$PWD/tmp "$MASKKIT" explain --toy distance --a 1 --sizes 1,2 --r 0.1..10:3 --csv - > a.csv || exit 1
"$MASKKIT" explain --toy distance --a 1 --sizes 1,2 --r 0.1..10:3 --csv b.csv > table || exit 1
cmp -s a.csv b.csv && echo "--csv - and --csv b.csv write the same CSV"
head -1 a.csv
grep -c '^check' a.csv
TMPDIR=$PWD/tmp "$MASKKIT" explain --toy collapse --steps 1 --csv - | head -2 | cut -d, -f1-5
ls tmp | wc -l
