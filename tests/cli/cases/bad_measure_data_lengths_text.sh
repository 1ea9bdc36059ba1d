printf "12\n7x\n" > len.txt
"$MASKKIT" measure local2 --lengths len.txt
