#!/bin/sh
# The include direction between the source tree's layers (HACKING.md, "Layers");
# the calls between them are tests/floors.py's, on the compiled symbols.
# Every `#include "..."` in src/, patterns/, analysis/ and include/maskkit/ is
# resolved as the compiler resolves it: the including file's own folder first,
# then the -I list of Makefile.am: for the library include/maskkit, src/core,
# src/io, src/expr, src/attn, src/plot, src/par, patterns, analysis, src/model;
# for the program (src/cli, src/report) include/maskkit, src/cli, src/report only.
# A header found nowhere in the tree (config.h, made by configure) belongs to
# no layer.  The rules:
#   - library folders (src/core, src/io, src/expr, src/attn, src/plot, src/par, src/model,
#     patterns, analysis) include no header of src/cli or src/report, and not the
#     umbrella include/maskkit/maskkit.h: each includes the public headers of the
#     modules it uses (core.h, mask.h, ...), and private ones;
#   - the program (src/cli, src/report) includes public headers and its own only,
#     no private header of the library (found anywhere in the tree, also by a
#     relative path);
#   - src/core includes no header of src/io, src/expr, src/attn, src/plot, src/par,
#     src/model, patterns;
#   - patterns/ includes no header of src/io or src/plot;
#   - include/maskkit/ headers include only system headers (<...>) and other
#     include/maskkit/ headers.
# Each violation is printed as FILE:LINE: includes HEADER (rule); exit 0 when
# there is none, 1 otherwise.  SRCDIR names the source tree (default: the
# parent of this script's folder).
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$SRCDIR" || exit 1

SEARCH_LIB="include/maskkit src/core src/io src/expr src/attn src/plot src/par patterns analysis src/model"
SEARCH_PROG="include/maskkit src/cli src/report"
LIBRARY="src/core src/io src/expr src/attn src/plot src/par patterns analysis src/model"

# The folder (relative to SRCDIR) of the header `hdr` included from folder
# `dir` with the -I list `search`, or nothing when the tree does not hold it.
resolve() {
	for d in "$1" $3; do
		if [ -f "$d/$2" ]; then
			case $2 in
			*/*) # a path: the folder it lands in, e.g. "../io/x.h"
				p=$(cd "$(dirname "$d/$2")" && pwd -P) || return
				case $p in
				"$top"/*) echo "${p#"$top"/}" ;;
				"$top") echo . ;;
				esac ;;
			*) echo "$d" ;;
			esac
			return
		fi
	done
}

# Prints the rule that `folder` breaks by including `header` (its name) of
# `hfolder`.
rule() {
	case $1 in src/cli | src/cli/* | src/report | src/report/*)
		case $2 in include/maskkit | src/cli | src/report) ;;
		*) echo "the program includes public headers and its own only"; return ;;
		esac ;;
	esac
	if [ "$2/$3" = include/maskkit/maskkit.h ]; then
		for l in $LIBRARY; do
			case $1 in "$l" | "$l"/*)
				echo "library code includes the modules' public headers, not the umbrella"
				return ;;
			esac
		done
	fi
	case $2 in
	src/cli | src/cli/* | src/report | src/report/*)
		for l in $LIBRARY; do
			case $1 in "$l" | "$l"/*)
				echo "library code ($l) includes no src/cli or src/report header"; return ;;
			esac
		done ;;
	esac
	case $1 in src/core | src/core/*)
		case $2 in src/io* | src/expr* | src/attn* | src/plot* | src/par* | src/model* | patterns*)
			echo "src/core includes no header of the layers above it"; return ;;
		esac ;;
	esac
	case $1 in patterns | patterns/*)
		case $2 in src/io* | src/plot*)
			echo "patterns/ includes no I/O or plot header"; return ;;
		esac ;;
	esac
	case $1 in include/maskkit | include/maskkit/*)
		case $2 in include/maskkit) ;;
		*) echo "include/maskkit/ includes only system and include/maskkit headers"; return ;;
		esac ;;
	esac
}

top=$(pwd -P)
fail=0
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT
for root in src patterns analysis include/maskkit; do
	[ -d "$root" ] && find "$root" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) -print
done | sort | while IFS= read -r file; do
	dir=$(dirname "$file")
	# LINE HEADER for each quoted include
	awk '/^[ \t]*#[ \t]*include[ \t]*"/ {
		s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); print FNR, s }' "$file" |
	while read -r line hdr; do
		case $dir in
		src/cli | src/cli/* | src/report | src/report/*) search=$SEARCH_PROG ;;
		*) search=$SEARCH_LIB ;;
		esac
		hfolder=$(resolve "$dir" "$hdr" "$search")
		if [ -n "$hfolder" ]; then
			shown=$hfolder/${hdr##*/}
		elif [ "$search" = "$SEARCH_PROG" ] &&
			hfolder=$(resolve "$dir" "$hdr" "$SEARCH_LIB") && [ -n "$hfolder" ]; then
			# the program's -I list does not reach it: a private header of the library
			shown="$hfolder/${hdr##*/} (not on its -I list)"
		else
			# not in the tree: fine for the library, not for a public header
			case $dir in include/maskkit*) ;; *) continue ;; esac
			hfolder=none shown="\"$hdr\", which is not in the tree,"
		fi
		why=$(rule "$dir" "$hfolder" "${hdr##*/}")
		if [ -n "$why" ]; then echo "$file:$line: includes $shown ($why)"; fi
	done
done >"$out"
if [ -s "$out" ]; then
	cat "$out"
	n=$(wc -l <"$out")
	echo "layers: $n include(s) against the layer rules" >&2
	fail=1
else
	echo "layers: every include follows the layer rules"
fi
exit $fail
