# --csv - and --json would both write to standard output
"$MASKKIT" explain --random 8,4 --csv - --json
