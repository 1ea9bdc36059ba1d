#!/bin/sh
# Every public header (include/maskkit/*.h) compiles on its own: a C11 file
# that includes only it, twice (its include guard), passes
# `cc -std=c11 -Wall -Wextra -Wstrict-prototypes -Werror -fsyntax-only` with
# nothing but include/maskkit on the include path (no config.h, no private
# folder), and so does a C++ file when a C++ compiler is there (extern "C").
# tests/layers.sh checks what the headers include.  CC and CXX pick the
# compilers (default cc and c++); SRCDIR names the source tree (default: the
# parent of this script's folder).  Exit 0 when all compile, 1 otherwise.
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
inc=$SRCDIR/include/maskkit
cc=${CC:-cc}
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || cxx=

fail=0
count=0
for h in "$inc"/*.h; do
	name=${h##*/}
	count=$((count + 1))
	src=$(printf '#include "%s"\n#include "%s"\n' "$name" "$name")
	if ! printf '%s\n' "$src" | $cc -std=c11 -Wall -Wextra -Wstrict-prototypes -Werror \
		-fsyntax-only -I "$inc" -x c -; then
		echo "headers: $name does not compile alone as C11" >&2
		fail=1
	fi
	if [ -n "$cxx" ] && ! printf '%s\n' "$src" | $cxx -Wall -Wextra -Werror -fsyntax-only \
		-I "$inc" -x c++ -; then
		echo "headers: $name does not compile alone as C++" >&2
		fail=1
	fi
done
[ "$count" -gt 0 ] || { echo "headers: no header in $inc" >&2; exit 1; }
[ "$fail" = 0 ] && echo "headers: each of the $count public headers compiles alone"
exit $fail
