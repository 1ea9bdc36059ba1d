printf "12 70\n" > len.txt
"$MASKKIT" measure local2 --lengths len.txt --n 64
