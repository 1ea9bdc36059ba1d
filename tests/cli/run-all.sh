#!/bin/sh
# Runs the CLI cases: cases/NAME.sh runs in a fresh scratch directory with
# $MASKKIT set; its exit code must equal cases/NAME.exit, and its stdout and
# stderr must equal cases/NAME.stdout.exact / NAME.stderr.exact when present.
# A case that exits 77 is skipped (it says why on stdout).
#   run-all.sh               every case but the slow ones (slow.list)
#   run-all.sh --slow        the slow ones (tests/cli/run-slow.sh: make runs
#                            them beside the others)
#   run-all.sh NAME...       the cases named (a NAME may be a shell pattern: 'toeplitz_*')
# The last line names the five slowest cases; CLI_TIMES=FILE keeps every
# case's seconds there, slowest first.
here=$(cd "$(dirname "$0")" && pwd)
: "${MASKKIT:?MASKKIT must point at the maskkit binary}"
export MASKKIT
pass=0 fail=0 skip=0
times=$(mktemp)
trap 'rm -f "$times"' EXIT
slow=" $(sed 's/#.*//' "$here/slow.list" | tr '\n' ' ') "
if [ "${1:-}" = --slow ]; then
	set -- $(for n in $slow; do echo "$here/cases/$n.sh"; done)
elif [ $# -gt 0 ]; then
	set -- $(for p in "$@"; do ls "$here"/cases/$p.sh 2>/dev/null || echo "$here/cases/$p.sh"; done)
else
	set -- $(for c in "$here"/cases/*.sh; do
		case "$slow" in *" $(basename "$c" .sh) "*) ;; *) echo "$c" ;; esac
	done)
fi
for case in "$@"; do
	name=$(basename "$case" .sh)
	if [ ! -f "$case" ]; then
		echo "FAIL $name: no such case ($case)"; fail=$((fail + 1)); continue
	fi
	dir=$(mktemp -d)
	t0=$(date +%s.%N)
	(cd "$dir" && sh "$case" >stdout 2>stderr)
	rc=$?
	printf '%s %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
		"$name" >>"$times"
	if [ "$rc" = 77 ]; then
		echo "SKIP $name: $(head -1 "$dir/stdout")"
		skip=$((skip + 1))
		rm -rf "$dir"
		continue
	fi
	ok=1
	want=$(cat "$here/cases/$name.exit" 2>/dev/null || echo 0)
	if [ "$rc" != "$want" ]; then
		echo "FAIL $name: exit $rc, expected $want"; ok=0
	fi
	for stream in stdout stderr; do
		exp="$here/cases/$name.$stream.exact"
		if [ -f "$exp" ] && ! cmp -s "$exp" "$dir/$stream"; then
			echo "FAIL $name: $stream differs"; diff "$exp" "$dir/$stream" | head -10; ok=0
		fi
	done
	if [ $ok = 1 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "--- stderr of $name:"; head -5 "$dir/stderr"
	fi
	rm -rf "$dir"
done
[ -n "${CLI_TIMES:-}" ] && sort -rn "$times" >"$CLI_TIMES"
echo "cli: $pass passed, $fail failed, $skip skipped; the slowest (s):" \
	"$(sort -rn "$times" | head -5 | tr '\n' ' ')"
[ "$fail" = 0 ]
