# an unknown option: did you mean; -o is not an option of measure
"$MASKKIT" measure local2 --n 8 --tiles 8
"$MASKKIT" measure local2 --n 8 --format txt
