# rows [3, 2, 4] against cols [3, 2, 5]
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5 --cols bad/cols5
