# star: d <= 1 plus token 0's row and column; strided(l=4)-diag: d < 4 or d mod 4 = 0, without i = j
"$MASKKIT" gen star --n 6 && echo && "$MASKKIT" gen strided-diag --n 9
