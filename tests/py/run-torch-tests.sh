#!/bin/sh
# pytest over python/tests_torch: Mask.block_mask(), Mask.mask_mod() and the
# flex-py file against a real torch (flex_attention, SDPA, create_block_mask),
# in the cached venv tests/py/torch-venv.sh makes (./quickstart.sh check runs
# it).  Run by make check (MK_BUILDDIR, SRCDIR, MASKKIT from
# AM_TESTS_ENVIRONMENT).  Skips (77) without that venv or torch in it, or
# without a shared library; under MASKKIT_REQUIRE_ALL those skips are failures.
src=${SRCDIR:-.}
lib=${MK_BUILDDIR:-build}/.libs/libmaskkit.so
venv=$(sh "$src/tests/py/torch-venv.sh" --path)
py=$venv/bin/python
skip() {
	echo "SKIP: $1"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	# as tests/py/run-pytest.sh: the plain pass runs these (SANITIZER_PASS_LEAVES)
	echo "SKIP: the torch tests run in the plain pass"
	exit 77
fi
[ -x "$py" ] || skip "no torch venv at $venv (make it with: sh tests/py/torch-venv.sh)"
# find_spec, not import: importing torch takes seconds
"$py" -c 'import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ("torch", "numpy", "pytest")))' 2>/dev/null ||
	skip "$py lacks torch, numpy or pytest (run: sh tests/py/torch-venv.sh)"
[ -f "$lib" ] || skip "no shared library $lib (configured with --disable-shared?)"
# nothing written into the source tree: no bytecode, no pytest cache
MASKKIT_LIB=$lib PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
	exec "$py" -m pytest -q -p no:cacheprovider "$src/python/tests_torch"
