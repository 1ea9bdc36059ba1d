printf "12 7\n" > len.txt
"$MASKKIT" measure local2 --lengths len.txt --threshold 0.1
