. "$(dirname "$0")/../npy.sh"; . "$(dirname "$0")/../lib.sh"
npy q.npy "<f4" "(3, 2)" 20; printf "\000\000\300\177" >>q.npy; npy k.npy "<f4" "(3, 2)" 24
printf "q.npy\nk.npy\nkeep.list\n" >keep.list
bad_input out.h5 "$MASKKIT" explain --q q.npy --k k.npy -o out.h5
