#!/bin/sh
# Runs the cuda backend's tests under compute-sanitizer, for a machine with a
# GPU (never part of make check: CI has none):
#   tests/gpu/sanitize.sh [BUILD_DIR]     (default: build)
# memcheck (out-of-bounds and misaligned device accesses, leaks of device
# memory), racecheck (shared-memory hazards: the tile kernels' cp.async
# staging and barriers) and synccheck (barriers in divergent code).  Each tool
# must report 0 errors; check_cuda's own checks must pass under each.
# CHECK_CUDA names the test program instead (the GPU bundle's wrapper, which
# runs it through the bundle's loader: hence --target-processes all), TOOLS
# the tools (default all three), CHECK_CUDA_MASKS its cases (see check_cuda.c).
set -u
build=${1:-build}
test=${CHECK_CUDA:-$build/tests/check_cuda}
sanitizer=${COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$sanitizer" >/dev/null 2>&1 || sanitizer=/usr/local/cuda/bin/compute-sanitizer
[ -x "$sanitizer" ] || sanitizer=/usr/local/cuda/compute-sanitizer/compute-sanitizer
[ -x "$test" ] || { echo "sanitize.sh: $test is missing (configure --with-cuda --with-check; make check)" >&2; exit 2; }
export CHECK_CUDA_MASKS="${CHECK_CUDA_MASKS:-}"
[ -x "$sanitizer" ] || { echo "sanitize.sh: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2; exit 2; }
# check_cuda runs its tests in one process (CUDA cannot be used in a child
# forked after it was initialised); CK_FORK=no says the same to Check
export CK_FORK=no
fail=
for tool in ${TOOLS:-memcheck racecheck synccheck}; do
	echo "== compute-sanitizer --tool $tool $test"
	extra=
	[ "$tool" = memcheck ] && extra="--leak-check full"
	"$sanitizer" --tool "$tool" $extra --target-processes all --error-exitcode 3 "$test"
	rc=$?
	[ "$rc" = 77 ] && { echo "sanitize.sh: no usable CUDA device" >&2; exit 77; }
	[ "$rc" = 0 ] || fail="$fail $tool"
done
[ -z "$fail" ] || { echo "sanitize.sh: failures under:$fail" >&2; exit 1; }
echo "sanitize.sh: ${TOOLS:-memcheck racecheck synccheck} clean"
