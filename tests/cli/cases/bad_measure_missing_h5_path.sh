# FILE.h5:/PATH is always a data set: a missing file is named as such
"$MASKKIT" measure missing.h5:/masks
