# Sourced by the attn cases.  npy FILE DESCR SHAPE BYTES: writes a version 1.0
# .npy file whose header holds DESCR and SHAPE (a Python tuple such as
# "(4, 8)"), then BYTES zero bytes (0.0 in every float type).
npy() {
	dict="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
	len=${#dict}
	printf '\223NUMPY\001\000' >"$1"
	printf "\\$(printf %03o $((len % 256)))\\$(printf %03o $((len / 256)))" >>"$1"
	printf '%s' "$dict" >>"$1"
	head -c "$4" /dev/zero >>"$1"
}
# qkv N D: q.npy, k.npy and v.npy of shape (N, D), float32, and keep.list naming them.
qkv() {
	for t in q k v; do npy $t.npy '<f4' "($1, $2)" $(($1 * $2 * 4)); done
	printf 'q.npy\nk.npy\nv.npy\nkeep.list\n' >keep.list
}
