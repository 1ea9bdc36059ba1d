#!/bin/sh
# Makes the bundle that the GPU machine runs (tests/gpu/device_check.sh):
#   tests/gpu/bundle.sh [OUT_DIR]                  (default: gpu-bundle)
# The GPU machine has the CUDA driver, nvcc, compute-sanitizer, PyTorch and
# numpy, but none of maskkit's Debian libraries (HDF5, cJSON, libpng, GSL,
# OpenBLAS, Check): so maskkit, check_cuda and check_block_plan travel with
# every shared library they load (their ldd closure, the dynamic loader
# included) and run there as
#   lib/ld-linux-x86-64.so.2 --library-path lib libexec/BIN
# through the wrappers in bin/, whatever that machine's own libraries are.
# The bundle also holds the templates, bench/peers.py, bench/gpu_sweep.sh,
# tests/gpu/sanitize.sh and a manifest; OUT_DIR/maskkit-gpu.tar.gz is what
# travels (the run tool's carry), well under its 64 MiB.
#
# BUILD=DIR reuses a build configured with CUDA and Check (tests/gpu/
# test_bundle.sh does, in CI); without it maskkit is built in build-gpu/
# for the H100/H200: configure --with-cuda --with-check --without-mpi
# CUDA_ARCH="90" (sm_90 code and PTX) NVCCFLAGS=-lineinfo (so that a
# compute-sanitizer report names the source line).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$top/gpu-bundle}
jobs=$(nproc 2>/dev/null || echo 2)
say() { printf 'bundle: %s\n' "$*"; }

build=${BUILD:-}
if [ -z "$build" ]; then
	build=$top/build-gpu
	[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi >/dev/null)
	if [ ! -f "$build/Makefile" ] || ! grep -q '^NVCCFLAGS = -lineinfo' "$build/Makefile"; then
		say "configure --with-cuda --with-check --without-mpi CUDA_ARCH=90 ($build)"
		mkdir -p "$build"
		(cd "$build" && "$top/configure" -q --with-cuda --with-check --without-mpi \
			CUDA_ARCH=90 NVCCFLAGS=-lineinfo PYTHON="${PYTHON:-/usr/bin/python3}")
	fi
	say "make ($build)"
	make -C "$build" -j"$jobs" -s maskkit tests/check_cuda tests/check_block_plan
fi
build=$(cd "$build" && pwd)
grep -q '^#define HAVE_CUDA 1' "$build/config.h" ||
	{ echo "bundle: $build was configured without CUDA (configure --with-cuda)" >&2; exit 2; }
for bin in maskkit tests/check_cuda tests/check_block_plan; do
	[ -x "$build/$bin" ] || { echo "bundle: $build/$bin is missing (make $bin)" >&2; exit 2; }
	# a libtool wrapper script would travel without the program it runs
	head -c 4 "$build/$bin" | grep -q ELF ||
		{ echo "bundle: $build/$bin is not a program (a libtool wrapper?)" >&2; exit 2; }
done

stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/libexec" "$stage/lib" "$stage/templates" "$stage/bench" \
	"$stage/tests/gpu"
for bin in maskkit tests/check_cuda tests/check_block_plan; do
	cp "$build/$bin" "$stage/libexec/"
done
# the ldd closure of the three programs: each library once, links resolved
ldd "$stage"/libexec/* | awk '
	/ => \// { print $3 }
	/^[ \t]*\/[^ ]*ld-linux/ { print $1 }' | sort -u >"$out/libs.txt"
grep -q 'ld-linux' "$out/libs.txt" || { echo "bundle: no dynamic loader in ldd's output" >&2; exit 1; }
while read -r lib; do
	cp -L "$lib" "$stage/lib/"
done <"$out/libs.txt"
# glibc's compatibility stubs: not in the closure (glibc 2.34 folded them
# into libc), but the host's libcuda or the sanitizer's injected libraries
# may ask for them, and the host's copies would not match the bundled libc
libc=$(grep '/libc\.so\.6$' "$out/libs.txt" | head -1)
for stub in libdl.so.2 libpthread.so.0 librt.so.1 libutil.so.1; do
	[ -e "$(dirname "$libc")/$stub" ] && cp -L "$(dirname "$libc")/$stub" "$stage/lib/"
done
loader=$(basename "$(grep ld-linux "$out/libs.txt" | head -1)")
for bin in maskkit check_cuda check_block_plan; do
	cat >"$stage/bin/$bin" <<EOF
#!/bin/sh
# $bin through the bundle's own loader and libraries.  --library-path
# replaces LD_LIBRARY_PATH, which may be how the host finds its CUDA driver
# (libcuda.so.1, dlopen'ed by the CUDA runtime): it and the folder of the
# driver that ldconfig knows come after the bundle's own libraries.
here=\$(cd "\$(dirname "\$0")/.." && pwd)
driver=\$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ {print \$NF; exit}')
path=\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\${driver:+:\$(dirname "\$driver")}
# the program is ld.so here (/proc/self/exe): maskkit must not re-run itself,
# so the thread settings it would make are made here
: "\${OMP_WAIT_POLICY:=PASSIVE}" "\${OPENBLAS_THREAD_TIMEOUT:=4}"
export OMP_WAIT_POLICY OPENBLAS_THREAD_TIMEOUT
MASKKIT_THREADS_SET=1 exec "\$here/lib/$loader" --library-path "\$path" "\$here/libexec/$bin" "\$@"
EOF
	chmod +x "$stage/bin/$bin"
done
cp "$top"/templates/*.gp "$stage/templates/"
cp "$top/bench/peers.py" "$top/bench/gpu_sweep.sh" "$stage/bench/"
cp "$top/tests/gpu/sanitize.sh" "$stage/tests/gpu/"
{
	echo "maskkit GPU bundle"
	echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
	echo "commit: $(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "build: $build"
	grep -E '^(CUDA_ARCH|NVCC) ?=' "$build/Makefile" | sed 's/^/  /' || true
	echo "files:"
	(cd "$stage" && find . -type f ! -name MANIFEST | sort | xargs sha256sum | sed 's/^/  /')
} >"$stage/MANIFEST"
tar -C "$stage" -czf "$out/maskkit-gpu.tar.gz.tmp" .
mv "$out/maskkit-gpu.tar.gz.tmp" "$out/maskkit-gpu.tar.gz"
size=$(wc -c <"$out/maskkit-gpu.tar.gz")
say "$out/maskkit-gpu.tar.gz: $((size / 1048576)) MiB, $(wc -l <"$out/libs.txt") libraries"
[ "$size" -lt $((60 * 1048576)) ] || { echo "bundle: over 60 MiB: it would not travel" >&2; exit 1; }
