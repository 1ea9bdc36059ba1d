#!/bin/sh
# `maskkit explain` at the issue's size: S = 4096, d = 64, 12 heads of
# Gaussian Q/K (scale 4, so softmax explains keys away), full and with a
# local(w=256) + global mask, for softmax,dnas and softmax,dnas,hnas:0.5,
# sinkhorn:3.  Median wall time of 3 runs and peak RSS: pi (12 x 4096^2
# floats, 805 MB) is never formed, so RSS stays near Q and K (2 x 12.6 MB).
: "${MASKKIT:=./maskkit}"
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
echo "threads: ${OMP_NUM_THREADS:-all}"
for mask in full "local(w=256) + global(g=4)"; do
	for norms in softmax,dnas softmax,dnas,hnas:0.5,sinkhorn:3; do
		set -- --random 4096,64,4 --heads 12 --norm "$norms"
		[ "$mask" = full ] || set -- "$@" --mask "$mask"
		: >"$dir/runs"
		for r in 1 2 3; do
			/usr/bin/time -f "%e %M" -o "$dir/time" "$MASKKIT" explain "$@" >/dev/null || exit 1
			cat "$dir/time" >>"$dir/runs"
		done
		sort -n "$dir/runs" | sed -n 2p | {
			read -r secs kib
			printf "explain S=4096 d=64 H=12 %-28s %-34s median %6.2f s  peak RSS %5.1f MiB\n" \
				"$mask" "$norms" "$secs" "$(echo "$kib" | awk '{ print $1 / 1024 }')"
		}
	done
done
