# S comes from Q and K: -n is not an option of explain
"$MASKKIT" explain --random 8,4 -n 8
