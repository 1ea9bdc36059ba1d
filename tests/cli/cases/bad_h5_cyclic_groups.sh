# a corrupt HDF5 file whose group links into itself (found by fuzz_h5): a clear
# error, not an endless search
. "$(dirname "$0")/../lib.sh"
cp "$(dirname "$0")/../fixtures/cyclic-groups.h5" c.h5 && printf 'c.h5\nkeep.list\n' > keep.list
bad_input out.npy "$MASKKIT" gen c.h5 -o out.npy
