# tf_model.h5 in two directories: '{}' would give both pictures one name
. "$(dirname "$0")/../lib.sh"
mkdir v1 v2 && cp "$(dirname "$0")/../fixtures/model.h5" v1/tf_model.h5 && cp v1/tf_model.h5 v2/ &&
	printf 'v1\nv2\nkeep.list\n' > keep.list
bad_input P-tf_model.png "$MASKKIT" toeplitz v1/tf_model.h5 v2/tf_model.h5 --png 'P-{}.png'
