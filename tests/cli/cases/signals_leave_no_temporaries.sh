# SIGINT, SIGTERM and SIGHUP in the middle of a write: the process dies by
# that signal (exit 128 + N), the file that was there is kept, and no
# temporary file is left: neither OUT.tmp.XXXXXX beside the output nor
# gnuplot's private folder in TMPDIR, also when the signal reaches only the
# report, whose commands run as child processes.
. "$(dirname "$0")/../lib.sh"
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || {
	echo "gnuplot not installed (apt-get install gnuplot-nox)"
	[ -n "${MASKKIT_REQUIRE_ALL:-}" ] && exit 1
	exit 77
}
mkdir tmp && export TMPDIR="$PWD/tmp"
# a gnuplot that takes its time, so that the signal comes while it draws
cat >slow-gnuplot <<'GP'
#!/bin/sh
trap 'kill $! 2>/dev/null; exit 1' INT TERM HUP
sleep 60 & wait $!
GP
chmod +x slow-gnuplot
export MASKKIT_GNUPLOT="$PWD/slow-gnuplot"
printf 'slow-gnuplot\ntmp\n' >keep.list
# wait_for GLOB: until a file matching GLOB exists (at most 60 s)
wait_for() {
	i=0
	while [ $i -lt 600 ]; do
		for f in $1; do [ -e "$f" ] && return 0; done
		sleep 0.1; i=$((i + 1))
	done
	echo "no $1 appeared" >&2
}
# kill_during SIG TARGET GLOB CMD...: runs CMD, sends SIG to TARGET (the
# process, or its whole group) once GLOB exists, prints the exit status and
# what was left
kill_during() {
	sig=$1 target=$2 glob=$3; shift 3
	# its own process group, with SIGINT not ignored as in a background job
	setsid env --default-signal=INT,QUIT "$@" >/dev/null 2>err &
	pid=$!
	wait_for "$glob"
	if [ "$target" = group ]; then kill -"$sig" -"$pid"; else kill -"$sig" "$pid"; fi
	wait "$pid"
	rc=$?
	echo "$sig to the $target of ${1##*/} $2: exit $rc; left: $(find . tmp -path ./tmp -prune -o -name '*.tmp.*' -print; ls -A tmp)" >&2
}
for sig in INT TERM HUP; do
	printf old >big.h5
	kill_during $sig process 'big.h5.tmp.*' "$MASKKIT" gen 'local(w=1)' --n 200000 \
		--max-memory 64G -o big.h5
	[ "$(cat big.h5)" = old ] || echo "big.h5 was changed" >&2
	printf old >h.png
	kill_during $sig process 'h.png.tmp.*' "$MASKKIT" explain --random 64,4 --png h.png
	[ "$(cat h.png)" = old ] || echo "h.png was changed" >&2
done
rm -f big.h5 h.png
kill_during INT group 'r/figures/*.tmp.*' "$MASKKIT" report --quick --quiet --out r
rm -rf r
kill_during TERM process 'r/figures/*.tmp.*' "$MASKKIT" report --quick --quiet --out r
rm -rf r err
