# getopt would take any unambiguous prefix (--n for --no-bias): only full
# names count, so a later option cannot change what a command line means
"$MASKKIT" positional model.h5 --n
