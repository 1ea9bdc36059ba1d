# Every kind of output on a full disk (see full_disk in lib.sh): exit 1 (the
# machine failed, not the input), one line with the OS's reason, the file
# that was there kept byte for byte, and no temporary file left.
. "$(dirname "$0")/../lib.sh"
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
need_numpy_h5py
# a 300 x 16 position embedding: its P is a 300 x 300 heatmap, far above 16 KB
"$py" -c '
import numpy as np, h5py
with h5py.File("emb.h5", "w") as f:
    f["position_embeddings"] = np.random.default_rng(1).standard_normal((300, 16))
' || exit 1
# out CMD...: CMD writes full/OUT (which holds "old" first), more than 16 KB
try() {
	out=$1; shift
	full_disk 16 sh -c 'printf old >"$0"; "$@" >/dev/null; rc=$?
		[ "$(cat "$0")" = old ] || echo "$0 was changed" >&2; exit $rc' "full/$out" "$@"
	echo "$out: exit $?" >&2
}
try m.txt "$MASKKIT" gen 'local(w=1)' --n 256 -o full/m.txt
try m.json "$MASKKIT" gen 'random(size=64)' --n 256 -o full/m.json
try m.npy "$MASKKIT" gen 'local(w=1)' --n 256 -o full/m.npy
try m.png "$MASKKIT" gen 'random(size=64)' --n 512 -o full/m.png
try p.png "$MASKKIT" toeplitz emb.h5 --png full/p.png
try h.png "$MASKKIT" explain --random 4096,16,4 --png full/h.png
try sums.npy "$MASKKIT" explain --random 4096,16,4 -o full/sums.npy
