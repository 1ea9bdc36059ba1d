# one report on standard output: --json and --csv - both write there
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --json --csv -
