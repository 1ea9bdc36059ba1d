# --lengths-file with the wrong number of entries
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
printf "4 3\n" > len.txt
"$MASKKIT" axis f.h5 --lengths-file len.txt
