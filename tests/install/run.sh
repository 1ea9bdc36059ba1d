#!/bin/sh
# make install into a scratch DESTDIR, then use what it installed as a user
# of another machine would:
#   - the files land where they should (program, libmaskkit shared and static
#     exporting mk_* only, every public header in include/maskkit, maskkit.pc,
#     maskkit(1), the bash completion, the templates and the examples);
#   - examples/libmaskkit_demo.c (the installed copy) builds with
#     pkg-config --cflags --libs maskkit, and statically with --static, and
#     prints the hand-counted numbers below;
#   - man -l renders maskkit(1), which has a section for every command that
#     maskkit --help lists;
#   - the bash completion completes commands, options, option values and
#     pattern names;
#   - neither the program nor the library holds the source tree's path, and
#     the installed maskkit report runs without it (and without Python).
# Run by make check (MK_BUILDDIR, MK_INSTALL_DIRS, MK_TEST_* from
# AM_TESTS_ENVIRONMENT).  Exits 77 when a tool it needs is missing (1 under
# MASKKIT_REQUIRE_ALL).
set -u
if [ -n "${MASKKIT_SANITIZED:-}" ]; then
	# what make install lays out and how it is used do not change with the
	# sanitizers: 72 s there, for nothing the plain build's run does not show
	echo "install: SKIP: checked in the plain build"
	exit 77
fi
: "${MK_BUILDDIR:?run by make check: MK_BUILDDIR is the build directory}"
: "${MK_INSTALL_DIRS:?run by make check: MK_INSTALL_DIRS names the install directories}"
: "${SRCDIR:?run by make check: SRCDIR is the source directory}"
cc=${MK_TEST_CC:-cc}
cflags=${MK_TEST_CFLAGS:-}
pkgconfig=${MK_TEST_PKG_CONFIG:-pkg-config}

skip() {
	echo "install: SKIP: $*"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
command -v "${cc%% *}" >/dev/null 2>&1 || skip "no C compiler ($cc) to build the demo with"
command -v "$pkgconfig" >/dev/null 2>&1 || skip "no pkg-config ($pkgconfig) (Debian: pkgconf)"
command -v man >/dev/null 2>&1 || skip "no man to render maskkit(1) with (Debian: man-db)"
command -v bash >/dev/null 2>&1 || skip "no bash to try the completion in"
command -v strings >/dev/null 2>&1 || skip "no strings (Debian: binutils)"

failed=0
fail() { echo "install: FAIL: $*"; failed=1; }
is_elf() { [ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' \n')" = 7f454c46 ]; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
D=$tmp/root
bindir= libdir= includedir= mandir= pkgdatadir= bashcompdir=
eval "$MK_INSTALL_DIRS"

# the program in the build tree is the program itself (it is copied into
# bundles, run under mpirun and valgrind), not a libtool wrapper script
is_elf "$MK_BUILDDIR/maskkit" || fail "$MK_BUILDDIR/maskkit is not an ELF executable"

# --- make install DESTDIR (a make of its own, not this make check's jobs) ------
if ! (unset MAKEFLAGS MFLAGS MAKELEVEL; make -s -C "$MK_BUILDDIR" install DESTDIR="$D") \
	>"$tmp/install.log" 2>&1; then
	echo "install: FAIL: make install DESTDIR=... failed:"
	tail -20 "$tmp/install.log"
	exit 1
fi
mk=$D$bindir/maskkit
[ -x "$mk" ] && is_elf "$mk" || fail "$bindir/maskkit: not installed, or not an ELF executable"
for f in libmaskkit.so.0.0.0 libmaskkit.so.0 libmaskkit.so libmaskkit.a pkgconfig/maskkit.pc; do
	[ -e "$D$libdir/$f" ] || fail "$libdir/$f not installed"
done
for h in "$SRCDIR"/include/maskkit/*.h; do
	[ -f "$D$includedir/maskkit/${h##*/}" ] || fail "public header $includedir/maskkit/${h##*/} not installed"
done
[ -f "$D$mandir/man1/maskkit.1" ] || fail "$mandir/man1/maskkit.1 not installed"
[ -f "$D$bashcompdir/maskkit" ] || fail "$bashcompdir/maskkit (bash completion) not installed"
for t in "$SRCDIR"/templates/*.gp "$SRCDIR"/templates/report.md "$SRCDIR"/templates/report.html; do
	[ -f "$D$pkgdatadir/templates/${t##*/}" ] || fail "template $pkgdatadir/templates/${t##*/} not installed"
done
for e in make_tf_model.py libmaskkit_demo.c sparsebert_compare.sh; do
	[ -f "$D$pkgdatadir/examples/$e" ] || fail "example $pkgdatadir/examples/$e not installed"
done
if command -v nm >/dev/null 2>&1 && [ -f "$D$libdir/libmaskkit.so" ]; then
	nm -D --defined-only "$D$libdir/libmaskkit.so" | awk 'NF == 3 && $2 != "A" {print $3}' |
		grep -v '^mk_' >"$tmp/exported"
	[ -s "$tmp/exported" ] && fail "libmaskkit.so exports names without mk_: $(head -5 "$tmp/exported" | tr '\n' ' ')"
	# and only what a public header declares (word match in the installed headers)
	nm -D --defined-only "$D$libdir/libmaskkit.so" | awk 'NF == 3 && $2 != "A" {print $3}' |
		while read -r sym; do
			grep -qw "$sym" "$D$includedir"/maskkit/*.h || echo "$sym"
		done >"$tmp/private"
	[ -s "$tmp/private" ] && fail "libmaskkit.so exports names no public header declares: $(head -5 "$tmp/private" | tr '\n' ' ')"
fi

# --- the demo, built against the installed library ---------------------------
demo=$D$pkgdatadir/examples/libmaskkit_demo.c
pcflags=$(PKG_CONFIG_PATH=$D$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D "$pkgconfig" --cflags --libs maskkit) ||
	fail "pkg-config --cflags --libs maskkit failed"
case " $pcflags " in
*" -I$D$includedir "*) ;;
*) fail "pkg-config --cflags maskkit lacks -I$D$includedir: $pcflags" ;;
esac
# shellcheck disable=SC2086 # flags are words
if $cc $cflags -Wall -Wextra -Werror -o "$tmp/demo" "$demo" $pcflags >"$tmp/cc.log" 2>&1; then
	# local(w=2) at n = 16: rows 0 and 15 keep 3 keys, rows 1 and 14 keep 4, rows
	# 2..13 keep 5: 74.  global(g=1): row 0 and column 0, 16 + 16 - 1 = 31.  Both:
	# (0,0), (0,1), (0,2), (1,0), (2,0) = 5, so A | B = 74 + 31 - 5 = 100 and the
	# sparsity 1 - 100/256 = 0.609375 (A & B: 1 - 5/256 = 0.980469).
	# At n = 8: 2*3 + 2*4 + 4*5 = 34, 8 + 8 - 1 = 15, 34 + 15 - 5 = 44: 1 - 44/64 = 0.3125.
	for want in "16 100 0.609375 5 0.980469" "8 44 0.312500 5 0.921875"; do
		set -- $want
		LD_LIBRARY_PATH=$D$libdir "$tmp/demo" "$1" >"$tmp/demo.out" 2>"$tmp/demo.err" ||
			fail "libmaskkit_demo $1 exited $?: $(cat "$tmp/demo.err")"
		grep -qx "n = $1" "$tmp/demo.out" &&
			grep -q "^A | B .* |M| = $2, sparsity = $3\$" "$tmp/demo.out" &&
			grep -q "^A & B .* |M| = $4, sparsity = $5\$" "$tmp/demo.out" &&
			[ "$(grep -c "|M| = $2, sparsity = $3\$" "$tmp/demo.out")" = 2 ] ||
			{ fail "libmaskkit_demo $1 printed (expected |A|B| = $2, |A&B| = $4):"; cat "$tmp/demo.out"; }
	done
	if command -v ldd >/dev/null 2>&1; then
		LD_LIBRARY_PATH=$D$libdir ldd "$tmp/demo" | grep -q "libmaskkit.so.0 => $D$libdir/" ||
			fail "the demo did not load libmaskkit from $D$libdir"
	fi
	LD_LIBRARY_PATH=$D$libdir "$tmp/demo" 16 'local(w=2)' 'nosuchpattern' >/dev/null 2>"$tmp/demo.err"
	rc=$?
	[ "$rc" = 1 ] && grep -q '^libmaskkit_demo: .*nosuchpattern' "$tmp/demo.err" ||
		fail "libmaskkit_demo with a bad expression: exit $rc, stderr: $(cat "$tmp/demo.err")"
else
	fail "the demo does not build with pkg-config --cflags --libs maskkit:"
	head -20 "$tmp/cc.log"
fi
# statically: libmaskkit.a and what maskkit.pc's Requires.private/Libs.private add
static=$(PKG_CONFIG_PATH=$D$libdir/pkgconfig "$pkgconfig" --static --libs maskkit) ||
	fail "pkg-config --static --libs maskkit failed"
static=$(printf '%s\n' "$static" | sed "s| -lmaskkit | $D$libdir/libmaskkit.a |; s|^-lmaskkit |$D$libdir/libmaskkit.a |")
# shellcheck disable=SC2086
if $cc $cflags -o "$tmp/demo-static" "$demo" -I"$D$includedir" $static >"$tmp/cc.log" 2>&1; then
	"$tmp/demo-static" 16 >"$tmp/demo.out" 2>&1 && grep -q "^A | B .* |M| = 100, sparsity = 0.609375\$" "$tmp/demo.out" ||
		fail "libmaskkit_demo linked statically: $(cat "$tmp/demo.out")"
else
	fail "the demo does not link statically with pkg-config --static --libs maskkit ($static):"
	head -20 "$tmp/cc.log"
fi

# --- maskkit(1) ----------------------------------------------------------------
"$mk" --help | awk '/^commands:/ {on = 1; next} on && /^[ \t]*$/ {exit} on && /^  +[a-z]/ {print $1}' \
	>"$tmp/commands"
[ -s "$tmp/commands" ] || fail "maskkit --help lists no commands"
if LC_ALL=C MANWIDTH=100 MANPAGER=cat PAGER=cat man -l "$D$mandir/man1/maskkit.1" >"$tmp/man.txt" 2>"$tmp/man.err"; then
	[ -s "$tmp/man.err" ] && fail "man -l maskkit.1 warns: $(head -3 "$tmp/man.err")"
	for s in NAME SYNOPSIS DESCRIPTION COMMANDS 'EXIT STATUS'; do
		grep -qx "$s" "$tmp/man.txt" || fail "maskkit(1) has no $s section"
	done
	while read -r cmd; do
		grep -qx "   maskkit $cmd" "$tmp/man.txt" || fail "maskkit(1) has no subsection for '$cmd'"
		usage=$("$mk" "$cmd" --help | head -1 | sed 's/^ *//')
		grep -qF -- "$usage" "$tmp/man.txt" || fail "maskkit(1) lacks '$usage'"
	done <"$tmp/commands"
else
	fail "man -l maskkit.1 failed: $(head -3 "$tmp/man.err")"
fi

# --- bash completion, asking the installed maskkit ------------------------------
cat >"$tmp/complete.bash" <<'EOF'
. "$1"
c() {
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
	COMPREPLY=(); _maskkit
	printf '%s\n' "$*:" "${COMPREPLY[@]}"
}
c maskkit me
c maskkit ''
c maskkit gen --fo
c maskkit measure --j
c maskkit gen --format ''
c maskkit gen big
c maskkit measure 'local2+glo'
c maskkit compose --op a
EOF
PATH=$D$bindir:$PATH bash "$tmp/complete.bash" "$D$bashcompdir/maskkit" >"$tmp/complete.out" 2>&1
# "LINE:" then its completions, one a line
completes() {
	awk -v line="$1:" -v want="$2" '$0 == line {on = 1; next} /:$/ {on = 0} on && $0 == want {found = 1}
		END {exit !found}' "$tmp/complete.out" || fail "completing '$1' does not give '$2'"
}
completes 'maskkit me' measure
while read -r cmd; do completes 'maskkit ' "$cmd"; done <"$tmp/commands"
completes 'maskkit gen --fo' --format
completes 'maskkit measure --j' --json
completes 'maskkit gen --format ' npy
completes 'maskkit gen big' bigbird
completes 'maskkit measure local2+glo' local2+global
completes 'maskkit compose --op a' and

# --- no source tree in what is installed ----------------------------------------
case " $cflags " in
*" --coverage "*) echo "install: --coverage builds name their .gcda files: not checking for the source path" ;;
*-fsanitize=*) echo "install: the sanitizers' reports name the compiler's source files: not checking for the source path" ;;
*)
	for f in "$mk" "$D$libdir/libmaskkit.so.0.0.0" "$D$libdir/libmaskkit.a"; do
		for src in "$SRCDIR" "$(cd "$SRCDIR" && pwd -P)"; do
			strings -a "$f" | grep -qF "$src" && fail "${f#"$D"} holds the source path $src"
		done
	done
	;;
esac

# --- the installed report needs neither the source tree nor Python: its
# synthetic fallback model is written by maskkit itself
mkdir "$tmp/run"
(cd "$tmp/run" && unset MASKKIT_EXAMPLES && PYTHON=/bin/false "$mk" report --out R --only tisa \
	--model none --quick --quiet) >"$tmp/report.out" 2>&1 ||
	fail "the installed maskkit report --only tisa: $(tail -3 "$tmp/report.out")"
for f in figures/tisa_P_1.png data/synthetic-bert/model.safetensors; do
	[ -s "$tmp/run/R/$f" ] || fail "the installed report made no $f"
done

[ "$failed" = 0 ] && echo "install: make install DESTDIR, the demo, maskkit(1), the completion: all as expected"
exit "$failed"
