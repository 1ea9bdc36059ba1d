printf "12 99999999999999999999\n" > len.txt
"$MASKKIT" measure local2 --lengths len.txt
