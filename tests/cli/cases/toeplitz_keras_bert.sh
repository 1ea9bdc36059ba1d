# a real Keras checkpoint (keras-bert's test model, in ../shared/data when
# present): its position embeddings are not named position_embeddings, so
# the search lists candidates and --dataset picks them
f="${SHARED_DATA:-}/keras-bert/test_bert_fit.h5"
[ -f "$f" ] || { echo "no $f (optional shared data)"; exit 77; }
"$MASKKIT" toeplitz "$f" 2> err && { echo "the search should fail"; exit 1; }
grep -q 'Embedding-Position/embeddings:0' err || { cat err; exit 1; }
"$MASKKIT" toeplitz "$f" --dataset model_weights/Embedding-Position/Embedding-Position/embeddings:0 \
	--json > j || exit 1
grep -q '"n":	20,' j && grep -q '"d":	25,' j || { cat j; exit 1; }
g=/model_weights/Encoder-1-MultiHeadSelfAttention/Encoder-1-MultiHeadSelfAttention/Encoder-1-MultiHeadSelfAttention
"$MASKKIT" positional "$f" --position /model_weights/Embedding-Position/Embedding-Position/embeddings:0 \
	--word /model_weights/Embedding-Token/Embedding-Token/embeddings:0 --query "${g}_Wq:0" \
	--key "${g}_Wk:0" --query-bias "${g}_bq:0" --key-bias "${g}_bk:0" --layout in-out \
	--heads 5 --fit 1 > out || exit 1
grep -q '^parameters per layer  *3 S H = 3 x 1 x 5 = 15$' out || { cat out; exit 1; }
echo ok
