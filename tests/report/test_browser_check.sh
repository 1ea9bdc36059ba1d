#!/bin/sh
# test_browser_check.sh: self-test of browser_check.sh.
#
# Builds fixture reports in a temp dir (make_fixtures.py) and asserts the check
# passes on a good report, fails naming the bad images on a report with a
# missing and a corrupt PNG, and fails on a blank page.  Exit 77 (skip) when
# chromium is missing, unless MASKKIT_REQUIRE_ALL is non-empty.
here=$(cd "$(dirname "$0")" && pwd)
check="$here/browser_check.sh"
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
    echo "test_browser_check: no maskkit code runs here: checked in the plain build"
    exit 77
fi
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
    echo "test_browser_check: chromium not installed (apt-get install chromium)"
    [ -n "$MASKKIT_REQUIRE_ALL" ] && exit 1
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_browser_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
/usr/bin/python3 "$here/make_fixtures.py" "$tmp" || exit 1
fail=0

# expect NAME WANT_STATUS DIR [GREP_PATTERN...]: run the check, test its status
# and that its output contains every pattern.
expect() {
    name=$1 want=$2 d=$3
    shift 3
    start=$(date +%s%N)
    "$check" "$d" "$tmp/$name.png" >"$tmp/$name.out" 2>&1
    got=$?
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    ok=1
    [ "$got" -eq "$want" ] || ok=0
    for pat in "$@"; do
        grep -q -- "$pat" "$tmp/$name.out" || ok=0
    done
    if [ $ok -eq 1 ]; then
        echo "PASS: $name (exit $got, ${ms} ms)"
    else
        echo "FAIL: $name (exit $got, wanted $want)"
        sed 's/^/    /' "$tmp/$name.out"
        fail=1
    fi
}

expect good 0 "$tmp/good" "2 images loaded, page not blank"
[ -s "$tmp/good.png" ] || { echo "FAIL: good: no screenshot"; fail=1; }
expect bad 1 "$tmp/bad" "2 of 4 images did not load" \
    "figures/missing.png" "figures/corrupt.png"
if grep -q "did not load:.*figures/[ab]\.png" "$tmp/bad.out"; then
    echo "FAIL: bad: a valid image was reported as not loaded"
    fail=1
fi
expect blank 1 "$tmp/blank" "is blank"
exit $fail
