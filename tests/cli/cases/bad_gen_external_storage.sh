# a mask kept in an external raw file (H5Pset_external) that is too short:
# libhdf5 reads the missing bytes as zeros, so external storage is refused
. "$(dirname "$0")/../lib.sh"
need_numpy_h5py
"$py" - <<'PY' || exit 1
import h5py
open("raw.bin", "wb").write(b"\x01" * 10)
with h5py.File("ext.h5", "w") as f:
    f.create_dataset("mask", shape=(8, 8), dtype="u1", external=[("raw.bin", 0, 64)])
PY
printf 'raw.bin\next.h5\nkeep.list\n' > keep.list
bad_input out.txt "$MASKKIT" gen ext.h5 --format txt -o out.txt
