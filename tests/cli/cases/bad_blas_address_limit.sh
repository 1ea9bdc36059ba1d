# Under an address-space limit too low for OpenBLAS's work buffers (ulimit -v
# 150 MB) maskkit neither hangs at exit nor in a BLAS call: --version works,
# and commands that need BLAS stop with exit 1 and one line saying why (attn
# on its sgemm path; its micro-kernels need no BLAS and run).  With room
# (600 MB) the same commands run.
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	echo "sanitizers reserve terabytes of address space; checked in the plain build"
	exit 77
fi
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
cp "$SRCDIR/tests/cli/fixtures/model.h5" . || exit 1
qkv 8 16
# two threads call BLAS at most, whatever the machine has
OMP_NUM_THREADS=2; export OMP_NUM_THREADS
run() {
	(ulimit -v "$1" || exit 99; shift; timeout 60 "$@" >out 2>err)
	rc=$?
	echo "$rc $(sed 's/[0-9.]* [KMGT]*i*B/SIZE/g' err)" >&2
}
run 150000 "$MASKKIT" --version
run 150000 "$MASKKIT" toeplitz model.h5
run 150000 "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
MASKKIT_CPU_KERNEL=blas run 150000 "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
run 600000 "$MASKKIT" toeplitz model.h5
run 600000 "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
MASKKIT_CPU_KERNEL=blas run 600000 "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
rm -f out err o.npy
