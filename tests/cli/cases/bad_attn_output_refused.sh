# Outputs refused with exit 2 and the file kept byte for byte: an output
# that is one of the inputs (the same .npy file, by any name, or the same
# HDF5 dataset; adding a dataset beside the inputs is fine), an existing
# FILE.h5 that is not HDF5 (it would be replaced by a new file), and a name
# that is a group of FILE.h5 (it would go with all it holds)
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$py" -c '
import numpy as np, h5py
rng = np.random.default_rng(5)
q = rng.standard_normal((6, 4)).astype("f4")
np.save("q.npy", q)
with h5py.File("store.h5", "w") as f:
    f["q"] = q
    f["g/x"] = q
    f["hard"] = f["q"]
' || exit 1
mkdir sub && ln -s ../q.npy sub/link.npy && ln q.npy hard.npy && ln -s store.h5 link.h5
printf 'not hdf5\n' >junk.h5
"$MASKKIT" gen 'local(w=1)' --n 6 -o m.npy || exit 1
cp q.npy q.orig && cp store.h5 store.orig && cp junk.h5 junk.orig && cp m.npy m.orig
# refused CMD...: CMD must exit 2 and change nothing
refused() {
	"$@" >/dev/null
	echo "exit $?" >&2
	cmp -s q.npy q.orig && cmp -s store.h5 store.orig && cmp -s junk.h5 junk.orig &&
		cmp -s m.npy m.orig ||
		echo "an input was changed" >&2
	ls | grep '\.tmp\.' >&2
}
refused "$MASKKIT" attn q.npy q.npy q.npy -o q.npy
refused "$MASKKIT" attn q.npy q.npy q.npy -o ./q.npy --weights-out w.npy
refused "$MASKKIT" attn q.npy q.npy q.npy -o w.npy --weights-out sub/link.npy
refused "$MASKKIT" attn q.npy hard.npy q.npy -o hard.npy
refused "$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o store.h5:/q
refused "$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o link.h5:q
refused "$MASKKIT" attn q.npy store.h5:/hard q.npy -o store.h5:/q
refused "$MASKKIT" attn store.h5:/g/x store.h5:/g/x store.h5:/g/x -o store.h5://g//x
refused "$MASKKIT" explain --q store.h5:/q --k q.npy -o store.h5:/q
refused "$MASKKIT" attn q.npy q.npy q.npy -o junk.h5:/O
refused "$MASKKIT" attn q.npy q.npy q.npy -o junk.h5
refused "$MASKKIT" attn q.npy q.npy q.npy -o store.h5:/g
# a mask file the --mask expression reads is an input too
refused "$MASKKIT" attn q.npy q.npy q.npy --mask m.npy --kernel masked -o m.npy
refused "$MASKKIT" attn q.npy q.npy q.npy --mask 'local(w=2) & m.npy' -o o.npy --weights-out m.npy
# allowed: a new dataset beside the inputs
"$MASKKIT" attn store.h5:/q store.h5:/q store.h5:/q -o store.h5:/O >/dev/null
echo "exit $?" >&2
