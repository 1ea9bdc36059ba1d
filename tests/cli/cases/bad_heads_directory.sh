mkdir d
"$MASKKIT" gen --heads-file d --n 8 -o s.h5
