. "$(dirname "$0")/../npy.sh"; . "$(dirname "$0")/../lib.sh"
# 1e30 in every entry: finite inputs whose scores q.k = 1e60 overflow float32
npy q.npy "<f4" "(2, 1)" 0; printf "\312\362\111\161\312\362\111\161" >>q.npy; cp q.npy k.npy
printf "q.npy\nk.npy\nkeep.list\n" >keep.list
bad_input out.h5 "$MASKKIT" explain --q q.npy --k k.npy -o out.h5
