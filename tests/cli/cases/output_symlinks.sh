# An output that is a symbolic link is written where the link points, also
# when that file does not exist yet (a dangling link), as the shell's '>'
# does: the link stays a link.  Relative links resolve from the link's
# folder; a chain of links is followed; a loop is one error line (exit 2).
mkdir sub
ln -s ../t1.txt sub/live.txt && echo old >t1.txt
ln -s ../t2.txt sub/dangling.txt
ln -s sub/dangling.txt chain.txt
ln -s loop1.txt loop2.txt && ln -s loop2.txt loop1.txt
for out in sub/live.txt sub/dangling.txt chain.txt; do
	"$MASKKIT" gen 'local(w=1)' --n 4 -o $out || echo "$out: exit $?"
	[ -L $out ] || echo "$out is no longer a link"
done
cat t1.txt t2.txt
"$MASKKIT" gen 'local(w=1)' --n 4 -o loop1.txt; echo "loop: exit $?"
ls -A | sort | tr '\n' ' '; echo
ls -A sub | sort | tr '\n' ' '; echo
