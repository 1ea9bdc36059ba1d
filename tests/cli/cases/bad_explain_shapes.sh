. "$(dirname "$0")/../npy.sh"; . "$(dirname "$0")/../lib.sh"
npy q.npy "<f4" "(2, 10, 4)" 320; npy k.npy "<f4" "(2, 10, 5)" 400; printf "q.npy\nk.npy\nkeep.list\n" >keep.list
bad_input out.h5 "$MASKKIT" explain --q q.npy --k k.npy -o out.h5
