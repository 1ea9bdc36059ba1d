. "$(dirname "$0")/../lib.sh"
py=${PYTHON:-/usr/bin/python3}
"$py" -c "import numpy, h5py" 2>/dev/null || { echo "needs numpy and h5py"; [ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1; exit 77; }
"$py" "$SRCDIR/tests/cli/fixtures/make_qk.py" layer in.h5 || exit 1
"$MASKKIT" explain in.h5 && exit 9
"$MASKKIT" explain in.h5 --heads 3 && exit 9
"$MASKKIT" explain in.h5 --heads 2 --linear keras
