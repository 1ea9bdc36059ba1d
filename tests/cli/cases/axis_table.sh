# the hand-made 3-sample file of check_axis.c: Eq. 9 with local2 is
# (1/16 + 2/16) / 6 = 1/32; the axis part alone (9/16 + 1 + 4/9 + 6/9 + 0 + 1/2) / 6
cp "$(dirname "$0")/../fixtures/axis.h5" f.h5 || exit 1
"$MASKKIT" axis f.h5
