#!/bin/sh
# test_page_check.sh: self-test of page_check.py on fixture folders: a good
# one passes; a PNG over 500 KB, a link to a missing anchor and a page with
# no contents each fail, naming the problem.
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_page_check.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
fail=0
page() { # DIR BODY: a report folder with one small PNG
	mkdir -p "$1/figures"
	printf '\211PNG\r\n\032\n' > "$1/figures/a.png"
	printf '<html><body>%s</body></html>\n' "$2" > "$1/index.html"
}
expect() { # NAME WANT_STATUS PATTERN
	/usr/bin/python3 "$here/page_check.py" "$tmp/$1" > "$tmp/$1.out" 2>&1
	got=$?
	if [ "$got" -eq "$2" ] && grep -q -- "$3" "$tmp/$1.out"; then
		echo "PASS: $1"
	else
		echo "FAIL: $1 (exit $got, wanted $2)"
		sed 's/^/    /' "$tmp/$1.out"
		fail=1
	fi
}
toc='<a href="#s-1">1</a> <a href="#r%C2%B2">R</a><h2 id="s-1">1</h2><h4 id="r²">R</h4>'
page "$tmp/good" "$toc"
expect good 0 "2 anchors resolve"
page "$tmp/big" "$toc"
head -c 500001 /dev/zero > "$tmp/big/figures/b.png"
expect big 1 "b.png is 500001 bytes"
page "$tmp/lost" "$toc<a href=\"#nowhere\">x</a>"
expect lost 1 "#nowhere has no target"
page "$tmp/flat" "<p>no contents</p>"
expect flat 1 "no contents"
exit $fail
