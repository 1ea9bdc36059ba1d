#!/bin/sh
# pytest over python/tests: the Python package (python/maskkit, ctypes over
# the build tree's shared libmaskkit) against the program's outputs.  Run by
# make check (MK_BUILDDIR, SRCDIR, MASKKIT, PYTHON from AM_TESTS_ENVIRONMENT).
# Skips (77) when $PYTHON lacks pytest or numpy, or the build made no shared
# library; under MASKKIT_REQUIRE_ALL those skips are failures.
py=${PYTHON:-/usr/bin/python3}
src=${SRCDIR:-.}
lib=${MK_BUILDDIR:-build}/.libs/libmaskkit.so
skip() {
	echo "SKIP: $1"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	# an ASan-built library loads into an uninstrumented Python only with the
	# runtime preloaded, and then reports the interpreter's own leaks; the
	# plain pass runs these tests (Makefile.am's SANITIZER_PASS_LEAVES)
	echo "SKIP: the Python package is tested in the plain pass"
	exit 77
fi
"$py" -c 'import pytest, numpy' 2>/dev/null ||
	skip "$py lacks pytest or numpy (apt-get install python3-pytest python3-numpy)"
[ -f "$lib" ] || skip "no shared library $lib (configured with --disable-shared?)"
# nothing written into the source tree: no bytecode, no pytest cache
MASKKIT_LIB=$lib PYTHONDONTWRITEBYTECODE=1 exec "$py" -m pytest -q -p no:cacheprovider \
	"$src/python/tests"
