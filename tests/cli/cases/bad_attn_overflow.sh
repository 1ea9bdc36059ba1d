# finite inputs whose scores overflow float32 (1e30 * 1e30): an error, never NaN
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy big.npy '<f4' '(4, 8)' 0
i=0; while [ $i -lt 32 ]; do printf '\312\362\111\161' >> big.npy; i=$((i + 1)); done
printf 'big.npy\nkeep.list\n' > keep.list
bad_input o.npy "$MASKKIT" attn big.npy big.npy big.npy -o o.npy
