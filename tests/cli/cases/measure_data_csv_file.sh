# --csv FILE writes the breakdown and the report is still printed
. "$(dirname "$0")/../lib.sh"; data_fixture hand d.h5
"$MASKKIT" measure d.h5 --by head --csv heads.csv || exit 1
echo "--- heads.csv"
cat heads.csv
# without --by: the CSV is per layer, the report has no breakdown
"$MASKKIT" measure d.h5 --csv layers.csv >/dev/null || exit 1
echo "--- layers.csv"
cat layers.csv
