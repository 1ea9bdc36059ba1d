. "$(dirname "$0")/../lib.sh"
# a written mask_mod is not a mask file: reading one back is refused
"$MASKKIT" gen causal --n 8 -o mod.py || exit 1
printf 'mod.py\nkeep.list\n' > keep.list
bad_input out.npy "$MASKKIT" gen mod.py -o out.npy
