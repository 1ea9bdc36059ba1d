# chunks of 112 samples in a dataset that can never have more than 7: a
# damaged layout (libhdf5 would read out of bounds), unlike a resizable one
cp "$(dirname "$0")/../../adversarial/corpus/chunk_beyond_maxdims.h5" d.h5 || exit 1
"$MASKKIT" measure d.h5
