# A rectangular mask: queries are the last q_len of the kv_len positions
# (a KV cache), so causal keeps j <= i + kv_len - q_len; text, .npy and
# measure agree, and formats that hold square masks refuse it
"$MASKKIT" gen causal --q-len 3 --kv-len 6 || exit 1
"$MASKKIT" gen 'causal&local2' --q-len 1 --kv-len 9 || exit 1
"$MASKKIT" gen 'prefix2' --q-len 5 --kv-len 3 -o p.npy || exit 1
"$MASKKIT" measure p.npy --tile 2 --json | grep -E '"(n|kv_len|count|causal)"'
"$MASKKIT" gen causal --q-len 3 --kv-len 6 -o c.json
echo "exit $?"
"$MASKKIT" measure 'document(lengths=2,3)' --q-len 2 --kv-len 5 | sed -n 3,5p
