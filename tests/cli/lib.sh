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
