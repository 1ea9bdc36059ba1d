# libmaskkit loads HDF5, OpenBLAS and GSL on first use (src/io/h5lazy.h,
# src/core/blas_lazy.c, analysis/gsl_lazy.h) and MPI only under a launcher
# (src/par/par_mpi.h),
# and the CUDA runtime brings no libstdc++: --version loads none of them
# (the loader says which files it opens under LD_DEBUG=files); commands
# that read no HDF5 file do not load HDF5, one that does loads it (the
# serial one: no MPI) and works, attention loads OpenBLAS only on its
# sgemm path (MASKKIT_CPU_KERNEL=blas), not with its micro-kernels, GSL only
# for a TISA fit (positional --fit), which then works; and an HDF5
# that cannot be loaded is one line naming it, exit 1, nothing written.
# (tests/mpi/run.sh runs the ranks.)
# loads WHAT CMD...: "WHAT: yes" when CMD loaded libWHAT (ran its
# initialisers: a probe with RTLD_NOLOAD is logged too, but loads nothing;
# grep reads it all: the command must not die of a closed pipe)
loads() {
	what=$1; shift
	if [ "$(LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -c "calling init: .*/lib$what[._]")" != 0 ]
	then
		echo "$what: yes"
	else
		echo "$what: no"
	fi
}
echo "--version"
loads hdf5 "$MASKKIT" --version
loads mpi "$MASKKIT" --version
loads openblas "$MASKKIT" --version
loads gsl "$MASKKIT" --version
# (the sanitizers' runtime needs libstdc++ itself: maskkit must not)
echo "libstdc++ needed by maskkit: $(LD_DEBUG=files "$MASKKIT" --version 2>&1 >/dev/null |
	grep -c 'file=libstdc++[^ ]* .*needed by [^ ]*maskkit ')"
# the CUDA runtime looks for the driver (libcuda) only when asked to find
# a GPU: never for --version (a build without CUDA never does)
echo "libcuda tried: $(LD_DEBUG=files "$MASKKIT" --version 2>&1 >/dev/null | grep -c 'file=libcuda')"
echo "gen to .txt"
loads hdf5 "$MASKKIT" gen causal --n 8 -o m.txt
echo "gen to .h5, measure"
loads hdf5 "$MASKKIT" gen causal --n 8 -o m.h5
loads mpi "$MASKKIT" measure m.h5
"$MASKKIT" measure m.h5 --json | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["n"])'
echo "attn"
. "$(dirname "$0")/../npy.sh"
qkv 8 16
loads openblas "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
MASKKIT_CPU_KERNEL=blas loads openblas "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
loads hdf5 "$MASKKIT" attn q.npy k.npy v.npy -o o.npy
echo "libcuda tried: $(LD_DEBUG=files "$MASKKIT" attn q.npy k.npy v.npy -o o.npy --backend cpu 2>&1 >/dev/null |
	grep -c 'file=libcuda')"
echo "positional, without and with a fit"
cp "$(dirname "$0")/../fixtures/model.h5" model.h5 || exit 1
loads gsl "$MASKKIT" positional model.h5 --heads 2
loads gsl "$MASKKIT" positional model.h5 --heads 2 --fit 1
"$MASKKIT" positional model.h5 --heads 2 --fit 1 --json 2>/dev/null | "$PYTHON" -c '
import json, sys
r = json.load(sys.stdin)
print("fits:", len(r["per_head"]), all(0 <= h["fit"]["r2"] <= 1 for h in r["per_head"]))'
echo "HDF5 missing"
MASKKIT_HDF5_LIB=/nonexistent/libhdf5.so "$MASKKIT" gen causal --n 8 -o gone.h5
echo "exit $?"
[ -e gone.h5 ] && echo "gone.h5 written"
exit 0
