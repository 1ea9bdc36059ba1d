# Sourced by cases.  bad_input OUT CMD...: runs CMD twice, first with OUT absent
# (it must stay absent), then with OUT holding a sentinel (it must be kept
# byte for byte); prints CMD's stderr once and exits with CMD's status.
# Violations go to stderr too, so the exact stderr comparison catches them.
bad_input() {
	out=$1; shift
	rm -f "$out"
	"$@" 2>err1 >/dev/null
	rc=$?
	[ -e "$out" ] && echo "created $out despite the error" >&2
	printf 'sentinel\n' >"$out"
	"$@" 2>/dev/null >/dev/null
	[ "$(cat "$out")" = sentinel ] || echo "$out was changed despite the error" >&2
	rm -f "$out"
	leftover=$(ls -A | grep -v '^err1$' | grep -v '^stdout$' | grep -v '^stderr$' | grep -v -F -x -f keep.list 2>/dev/null)
	[ -z "$leftover" ] || echo "left behind: $leftover" >&2
	cat err1 >&2
	rm -f err1
	return $rc
}

# need_numpy_h5py: sets $py to the Python that has numpy and h5py; skips the
# case (77) without them, fails it in quickstart's runs.
need_numpy_h5py() {
	py=${PYTHON:-/usr/bin/python3}
	if ! "$py" -c 'import numpy, h5py' 2>/dev/null; then
		echo "needs numpy and h5py (apt-get install python3-numpy python3-h5py)"
		[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
		exit 77
	fi
}

# data_fixture KIND OUT.h5: a small data set from fixtures/make_data.py.
data_fixture() {
	need_numpy_h5py
	"$py" "$SRCDIR/tests/cli/fixtures/make_data.py" "$1" "$2" || exit 1
}

# cuda_case KIND OUT CMD...: runs CMD (which asks for --backend cuda) as
# bad_input does and prints its stderr with the CUDA runtime's reason, which
# differs between machines, replaced by REASON.  KIND "unbuilt": the case is
# about a maskkit built without CUDA; it is skipped (77) when maskkit has the
# backend.  KIND "nodevice": about one built with CUDA on a machine with no
# usable device; skipped without the backend or when a device is usable.
cuda_case() {
	kind=$1; shift
	cuda_err=$(mktemp)
	bad_input "$@" 2>"$cuda_err"
	rc=$?
	built=yes
	grep -q "is not built into this maskkit" "$cuda_err" && built=no
	skip=
	case $kind,$built,$rc in
	unbuilt,yes,*) skip="maskkit has the cuda backend";;
	nodevice,no,*) skip="maskkit has no cuda backend";;
	nodevice,yes,0) skip="a CUDA device is usable";;
	esac
	[ -z "$skip" ] || { rm -f "$cuda_err" "$1"; echo "$skip"; exit 77; }
	sed 's/no usable CUDA device (.*)$/no usable CUDA device (REASON)/' "$cuda_err" >&2
	rm -f "$cuda_err"
	return $rc
}

# full_disk KB CMD...: runs CMD (from this folder) where the folder ./full lies
# on a file system with KB kilobytes free, so that CMD's writes there fail as
# on a full disk: a tmpfs of KB kilobytes mounted in a private mount namespace
# where that is allowed (root), else a file-size limit of KB kilobytes
# (ulimit -f, in 512-byte blocks: writes past it fail with EFBIG).  The OS's reason, which differs
# between the two ("No space left on device", "File too large"), is printed
# as DISK FULL; files CMD left in ./full are listed as "left in full: NAME".
full_disk() {
	kb=$1; shift
	rm -rf full && mkdir full
	if [ -z "${MASKKIT_NO_TMPFS:-}" ] && unshare -m true 2>/dev/null; then
		unshare -m sh -c 'mount -t tmpfs -o size="$0"k tmpfs full 2>/dev/null || exit 99
			"$@"; rc=$?; ls -A full | sed "s/^/left in full: /" >&2; exit $rc' "$kb" "$@" 2>full.err
		rc=$?
		[ $rc = 99 ] || { sed 's/No space left on device/DISK FULL/g; s/File too large/DISK FULL/g' full.err >&2; rm -f full.err; return $rc; }
	fi
	(trap "" XFSZ; ulimit -f $((kb * 2)); "$@") 2>full.err
	rc=$?
	ls -A full | sed "s/^/left in full: /" >>full.err
	sed 's/No space left on device/DISK FULL/g; s/File too large/DISK FULL/g' full.err >&2
	rm -f full.err
	return $rc
}
