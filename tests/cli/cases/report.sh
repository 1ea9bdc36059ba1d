# maskkit report: every file README.md points at exists (PNGs are PNGs), a
# second run is byte-identical, Table 4 equals 'maskkit measure', broken
# inputs cost only their own figures (exit 1, named on stderr and in
# README.md), bad options exit 2 with one line, a failed rendering keeps the
# old README.md, and --only remakes only its section.  Runs the quick report
# four times (about 15 s).  Failures are listed on stderr; all are checked.
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
# the synthetic model the report writes itself, whatever this machine has
# fetched (tests/py/test_report_model.py runs the report on the real one)
export MASKKIT_MODEL=$PWD/no-model
SRCDIR=${SRCDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
unset MASKKIT_GNUPLOT MASKKIT_TEMPLATES

failed=0
fail() { echo "report.sh: $*" >&2; failed=1; }
png() { [ -s "$1" ] && od -An -tx1 -N8 "$1" | tr -d ' \n' | grep -q '^89504e470d0a1a0a$'; }
# nonempty FILE...: each exists and is not empty
nonempty() { for f; do [ -s "$f" ] || fail "$f is missing or empty"; done; }
# expect_rc WANT GOT WHAT
expect_rc() { [ "$2" = "$1" ] || fail "$3: exit $2, expected $1 (stderr: $(head -3 err | tr '\n' ' '))"; }

# a small sweep CSV, and two broken ones
"$MASKKIT" sweep --backend cpu --n 64 --heads 1 --patterns local,strided --sparsity 50%,80% \
	--reps 1 -o F.csv 2>/dev/null || { echo "maskkit sweep failed" >&2; exit 1; }
grep -v '^#' F.csv | head -2 >bad.csv
# line 3: median_s (column 15) is not a number
grep -v '^#' F.csv | sed -n 3p | awk -F, 'BEGIN { OFS = "," } { $15 = "abc"; print }' >>bad.csv
[ "$(head -1 bad.csv | cut -d, -f15)" = median_s ] || fail "median_s is not column 15 of the sweep CSV"
printf 'a,b,c\n1,2,3\n' >nohead.csv

# --- a. the whole report: every file README.md links to exists -----------------
"$MASKKIT" report --out D --quick --sweep F.csv >out 2>err
expect_rc 0 $? "report --quick --sweep F.csv"
nonempty D/index.html D/README.md
grep -q '<table>' D/index.html || fail "index.html has no <table>"
grep -q '<img' D/index.html || fail "index.html has no <img"
grep -q ': \([0-9]*\) of \1 files made$' out || fail "summary: $(cat out)"
grep -o '](\(figures\|tables\)/[^)]*)' D/README.md | sed 's/^](//; s/)$//' | sort -u >targets
[ "$(grep -c '^figures/.*\.png$' targets)" -ge 10 ] || fail "README.md links only $(grep -c png targets) PNGs"
grep -q '^figures/.*\.svg$' targets || fail "README.md links no SVG"
grep -q '^tables/' targets || fail "README.md links no table"
while read -r t; do
	nonempty "D/$t"
	case $t in *.png) png "D/$t" || fail "D/$t is not a PNG";; esac
done <targets
for f in D/figures/*.png; do png "$f" || fail "$f is not a PNG"; done

# --- b. the same command again: byte-identical ----------------------------------
cp -R D D1
"$MASKKIT" report --out D --quick --sweep F.csv >/dev/null 2>err
expect_rc 0 $? "second report"
(cd D1 && find README.md index.html figures tables -type f | sort) >files1
(cd D && find README.md index.html figures tables -type f | sort) >files2
cmp -s files1 files2 || fail "the second run made other files: $(diff files1 files2 | tr '\n' ' ')"
while read -r f; do
	cmp -s "D1/$f" "D/$f" || fail "$f differs between two runs"
done <files1

# --- b2. the commands under a section remake it, run in the report's directory --
rm D1/figures/aaa_fig1.png D1/tables/aaa_fig1.csv
sed -n '/^## 3\./,/^## 4\./p' D1/README.md | sed -n '/^```sh$/,/^```$/p' | grep -v '^```' >cmds
grep -q '^maskkit report --out \. --only aaa-fig1 --quick$' cmds || fail "AAA commands: $(tr '\n' ' ' <cmds)"
(cd D1 && PATH="$(dirname "$MASKKIT"):$PATH" sh ../cmds >/dev/null 2>&1) || fail "AAA commands failed"
for f in figures/aaa_fig1.png tables/aaa_fig1.csv; do
	cmp -s "D/$f" "D1/$f" || fail "the commands under AAA Fig. 1 did not remake $f"
done
[ -e D1/report ] && fail "the commands under AAA Fig. 1 made a nested report/"

# --- c. Table 4 is what 'maskkit measure' prints ---------------------------------
"$MASKKIT" measure --n 128 star star-diag logsparse logsparse-diag strided strided-diag fixed \
	fixed-diag longformer longformer-diag bigbird bigbird-diag >measure.txt ||
	fail "maskkit measure failed"
# pattern,n,count,sparsity,count_nodiag,sparsity_nodiag from the text table
awk 'NR > 1 { c[$1] = $3; s[$1] = $4 }
	END { for (p in c) if (p !~ /-diag$/)
		printf "%s,128,%s,%s,%s,%s\n", p, c[p], s[p], c[p "-diag"], s[p "-diag"] }' measure.txt |
	sort >want4
[ "$(wc -l <want4)" = 6 ] || fail "measure printed $(wc -l <want4) patterns: $(cat measure.txt)"
tail -n +2 D/tables/sparsebert_table4.csv | cut -d, -f1,2,3,4,6,7 | sort >got4
cmp -s want4 got4 || fail "sparsebert_table4.csv differs from maskkit measure: $(diff want4 got4 | tr '\n' ' ')"
head -1 D/tables/sparsebert_table4.csv | cut -d, -f1,2,3,4,6,7 |
	grep -qx 'pattern,n,count,sparsity,count_nodiag,sparsity_nodiag' ||
	fail "sparsebert_table4.csv header: $(head -1 D/tables/sparsebert_table4.csv)"
# README.md's rows: | Name | count | pct | count w/o diag | pct w/o diag |, pct = 0.961304 -> 96.1304
pct() { case $1 in 0.*) echo "$1" | sed 's/^0\.\(..\)/\1./';; *) echo "?$1";; esac; }
while IFS=, read -r p _ c s cn sn; do
	row="| $c | $(pct "$s") | $cn | $(pct "$sn") |"
	grep -i "^| $p |" D/README.md | grep -qF "$row" ||
		fail "README.md Table 4 has no row '| $p $row': $(grep -i "^| $p |" D/README.md)"
done <want4

# --- d. broken inputs: exit 1, the rest is written, the reason is named ----------
# a whole report with missing weights and a malformed sweep CSV
"$MASKKIT" report --out W --quick --weights /nonexistent/model.h5 --sweep bad.csv >/dev/null 2>err
expect_rc 1 $? "missing weights and bad sweep"
grep -q '/nonexistent/model.h5' err || fail "stderr does not name the weights file"
grep 'bad\.csv' err | grep -q 'line 3' || fail "stderr does not name bad.csv line 3"
nonempty W/index.html W/README.md W/figures/sparsebert_fig1.png W/figures/sparsebert_fig1.svg \
	W/figures/aaa_fig1.png W/figures/eq9.png W/figures/explain_hist.png \
	W/tables/sparsebert_fig1.csv W/tables/sparsebert_table4.csv W/tables/aaa_fig1.csv \
	W/tables/eq9.csv W/tables/explain_heads.csv
for f in sparsebert_fig1 aaa_fig1 eq9 explain_hist; do
	cmp -s "W/figures/$f.png" "D/figures/$f.png" || fail "W/figures/$f.png differs from a good run's"
done
png W/figures/tisa_P_1.png || fail "W/figures/tisa_P_1.png (the synthetic model) is missing"
[ -e W/figures/tisa_P_2.png ] && fail "W/figures/tisa_P_2.png was made from a missing file"
[ -e W/figures/sweep.png ] && fail "W/figures/sweep.png was made from a malformed CSV"
grep 'figures/tisa_P_2\.png' W/README.md | grep -q 'model\.h5' ||
	fail "README.md does not say why figures/tisa_P_2.png was not made"
grep 'figures/sweep\.png' W/README.md | grep 'bad\.csv' | grep -q 'line 3' ||
	fail "README.md does not say why figures/sweep.png was not made"
grep -q '](figures/tisa_P_2\.png)' W/README.md && fail "README.md shows the missing tisa_P_2.png"
grep -q 'could not be made' W/index.html || fail "index.html does not list the missing figures"

# a malformed CSV alone: nothing of the section is written
"$MASKKIT" report --out S --only sweep --sweep bad.csv --quiet >/dev/null 2>err
expect_rc 1 $? "--only sweep --sweep bad.csv"
grep 'bad\.csv' err | grep -q 'line 3' || fail "--only sweep: stderr does not name bad.csv line 3"
[ -e S/tables/sweep.csv ] || [ -e S/figures/sweep.png ] && fail "a malformed CSV left sweep files"
"$MASKKIT" report --out S --only sweep --sweep nohead.csv --quiet >/dev/null 2>err
expect_rc 1 $? "--only sweep --sweep nohead.csv"
grep 'nohead\.csv' err | grep -q header || fail "a CSV without the header columns: $(cat err)"

# no gnuplot: its figures fail, the tables and libpng's figures are written
MASKKIT_GNUPLOT=/nonexistent/gnuplot "$MASKKIT" report --out G --quiet \
	--only sparsebert-fig1,sparsebert-table4,eq9,tisa >/dev/null 2>err
expect_rc 1 $? "MASKKIT_GNUPLOT=/nonexistent/gnuplot"
grep -q gnuplot err || fail "the error does not name gnuplot"
nonempty G/tables/sparsebert_fig1.csv G/tables/sparsebert_table4.csv G/tables/eq9.csv \
	G/tables/tisa_r2.csv G/figures/tisa_P_1.png
for f in G/figures/tisa_P_1.png; do png "$f" || fail "$f is not a PNG"; done
for f in G/tables/sparsebert_fig1.csv G/tables/sparsebert_table4.csv G/tables/eq9.csv; do
	cmp -s "$f" "D/${f#G/}" || fail "$f differs from a good run's"
done
[ -e G/figures/sparsebert_fig1.png ] && fail "G/figures/sparsebert_fig1.png made without gnuplot"

# --- e. bad options: exit 2, one line, nothing written ---------------------------
echo notes >notes.txt
for args in "--only nosuch" "--only" "extra" "--out ''" "--bogus" "--out notes.txt"; do
	eval "\"\$MASKKIT\" report --quick $args" >out 2>err
	expect_rc 2 $? "report $args"
	[ "$(wc -l <err)" = 1 ] || fail "report $args: $(wc -l <err) lines on stderr"
	[ -s out ] && fail "report $args wrote to stdout"
	[ -e report ] && { fail "report $args made ./report"; rm -rf report; }
done
grep -q "'notes.txt' is a file, not a directory" err || fail "--out notes.txt: $(cat err)"
[ "$(cat notes.txt)" = notes ] || fail "--out notes.txt changed the file"
"$MASKKIT" report --help >out 2>err
expect_rc 0 $? "report --help"
grep -q '^usage: maskkit report' out || fail "--help: no usage line"
# a rendering that fails (a template with an unknown placeholder) keeps the old files
mkdir T R
cp "$SRCDIR"/templates/* T/ || fail "no templates in $SRCDIR/templates"
printf '# {{no_such_slot}}\n' >T/report.md
echo keep >R/README.md
echo keep >R/index.html
MASKKIT_TEMPLATES=$PWD/T "$MASKKIT" report --out R --quick --quiet --weights /nonexistent/model.h5 \
	--sweep F.csv >/dev/null 2>err
rc=$?
[ $rc = 0 ] && fail "a template with an unknown placeholder exited 0"
grep -q 'report\.md' err || fail "the error does not name report.md: $(cat err)"
[ "$(cat R/README.md)" = keep ] || fail "R/README.md was overwritten by a failed rendering"
[ "$(cat R/index.html)" = keep ] || fail "R/index.html was overwritten by a failed rendering"
left=$(find R -type f | grep -v -E '\.(png|svg|csv|txt|h5)$' | grep -v '^R/data/' |
	grep -v -x -e R/README.md -e R/index.html)
[ -z "$left" ] || fail "left behind in R: $left"

# --- f. --only eq9 remakes eq9's files and nothing else ---------------------------
rm D/tables/eq9.csv D/tables/eq9_lengths.txt D/figures/eq9.png D/figures/eq9.svg
touch stamp
"$MASKKIT" report --out D --only eq9 --quiet >out 2>err
expect_rc 0 $? "--only eq9"
for f in tables/eq9.csv tables/eq9_lengths.txt figures/eq9.png figures/eq9.svg; do
	cmp -s "D1/$f" "D/$f" || fail "--only eq9: $f missing or not as the whole report made it"
done
# (data/: the model and its attention maps, which Eq. 9's second part reads)
newer=$(cd D && find . -newer ../stamp -type f | sed 's|^\./||' | grep -v '^data/' | sort |
	tr '\n' ' ')
[ "$newer" = "figures/eq9.png figures/eq9.svg figures/eq9_real.png figures/eq9_real.svg tables/eq9.csv tables/eq9_lengths.txt " ] ||
	fail "--only eq9 wrote: $newer"
cmp -s D1/README.md D/README.md || fail "--only eq9 changed README.md"
cmp -s D1/index.html D/index.html || fail "--only eq9 changed index.html"

[ $failed = 0 ] || exit 1
echo ok
