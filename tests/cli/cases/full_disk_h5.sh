# Every HDF5 writer on a full disk (see full_disk in lib.sh): exit 1 (the
# machine failed, not the input) with the OS's reason, the file that was
# there kept byte for byte and no temporary file left.  libhdf5 1.10 frees a
# file whose close fails but keeps its identifier, and closed it again at
# exit: prune, gen and axis died with SIGSEGV after their message, and attn
# reported success for a file it had not written.
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
# P of 4 heads of 256 x 256 (masks of 32 KB and more once deflated), Q of
# 256 x 32 (O is 32 KB), an HDF5 file with one small dataset to add O to
"$py" -c '
import numpy as np, h5py
rng = np.random.default_rng(1)
np.save("p.npy", rng.random((4, 256, 256)).astype("f4"))
np.save("q.npy", rng.standard_normal((256, 32)).astype("f4"))
with h5py.File("store.h5", "w") as f:
    f["keep"] = np.arange(6.0).reshape(2, 3)
' || exit 1
printf '["random(size=64)", "random(size=64)", "random(size=64)", "random(size=64)"]\n' >heads.json
cp "$SRCDIR/tests/cli/fixtures/axis.h5" axis.h5 || exit 1
# try KB OUT OLD CMD...: CMD writes full/OUT, which holds a copy of OLD
# first, on a disk of KB kilobytes; then full/OUT is removed, so that only a
# file CMD left there is listed
try() {
	kb=$1 out=$2 old=$3; shift 3
	full_disk "$kb" sh -c 'cp "$1" "$0" && cp "$1" old.copy || exit 9; shift
		"$@" >/dev/null; rc=$?
		cmp -s "$0" old.copy || echo "$0 was changed" >&2; rm -f old.copy "$0"; exit $rc' \
		"full/$out" "$old" "$@"
	echo "$out: exit $?" >&2
}
printf old >old.txt
try 16 t.h5 old.txt "$MASKKIT" prune p.npy --sparsity 0.5 -o full/t.h5
try 16 s.h5 old.txt "$MASKKIT" gen --heads-file heads.json --n 256 -o full/s.h5
try 16 g.h5 old.txt "$MASKKIT" gen 'random(size=64)' --n 512 -o full/g.h5
try 4 a.h5 old.txt "$MASKKIT" axis axis.h5 --sample 0 -o full/a.h5
try 16 o.h5 store.h5 "$MASKKIT" attn q.npy q.npy q.npy -o full/o.h5
try 16 o2.h5 store.h5 "$MASKKIT" attn q.npy q.npy q.npy -o full/o2.h5:/deep/O
try 16 sums.h5 store.h5 "$MASKKIT" explain --random 2048,8 -o full/sums.h5:/sums
