# axis reads two datasets, named by --rows and --cols, not by FILE.h5:/PATH
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5:/rows
