# The acceptance of --align: one query against 1000 keys.  Bottom-right (the
# default, a KV cache) puts the query at key 999, so causal keeps all 1000
# cells; top-left puts it at key 0 (SDPA's is_causal, attention-gym's
# causal_mask: q_idx >= kv_idx), so causal keeps 1.  Counts from j <= i + off.
for a in "" "--align bottom-right" "--align top-left"; do
	# shellcheck disable=SC2086
	"$MASKKIT" measure causal --q-len 1 --kv-len 1000 $a --json |
		grep -E '"(align|count|diagonal|causal)":' || exit 1
done
# a square mask is the same either way, and its --json has no align
"$MASKKIT" measure causal --n 6 --align top-left --json | grep -c '"align"'
"$MASKKIT" gen causal --n 6 --align top-left --json | grep -E '"(n|kv_len|align|count)":'
