# --csv FILE writes the CSV and still prints the table (or --json); --csv -
# prints the same CSV instead of the table
. "$(dirname "$0")/../npy.sh"
qkv 6 4
"$MASKKIT" attn q.npy k.npy v.npy --weights-out w.h5 -o o.npy >/dev/null || exit 1
"$MASKKIT" attn-stats w.h5 --csv s.csv > table || exit 1
"$MASKKIT" attn-stats w.h5 --csv - > out.csv || exit 1
cmp -s s.csv out.csv && echo "--csv s.csv and --csv - write the same CSV"
head -1 table | cut -d' ' -f1
head -1 s.csv
"$MASKKIT" attn-stats w.h5 --csv s2.csv --json | grep -c '"per_layer"'
cmp -s s.csv s2.csv && echo "and with --json too"
ls *.csv
