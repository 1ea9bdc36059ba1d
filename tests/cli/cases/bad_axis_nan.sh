# NaN in float indicators
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --rows bad/nan
