# causal at n = 10 in blocks of 4 written as a FlexAttention layout (.npz by
# its extension) and measured back: the cells of its 6 non-empty blocks,
# 16 + 32 + 20, with a note that partial blocks count whole
"$MASKKIT" gen causal --n 10 --block 4 -o l.npz && "$MASKKIT" measure l.npz --tile 4
