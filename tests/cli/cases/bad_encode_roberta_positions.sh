. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# RoBERTa numbers positions from pad_token_id + 1: max_position_embeddings 3
# with pad_token_id 1 leaves one position, and a sample needs two. Issue 27:
# this was blamed on the text and on a max_len the user never gave.
"$py" "$SRCDIR/tests/cli/fixtures/make_encoder.py" model --set 'model_type="roberta"' \
	--set 'pad_token_id=1' --set 'max_position_embeddings=3' || exit 1
printf 'hello world\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.h5 "$MASKKIT" encode model --text t.txt -o out.h5
