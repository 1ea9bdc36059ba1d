"$MASKKIT" measure --n 128 --tile 16 local2 causal 'axis(rows=0)'
