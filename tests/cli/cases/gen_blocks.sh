# causal at n = 10 in blocks of 4: query block qb sees key blocks 0..qb; the
# diagonal ones are partial, and the ragged last row of blocks is never full
"$MASKKIT" gen causal --n 10 --format blocks --block 4 | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["num_blocks"], d["kv_num_blocks"], d["kv_indices"], d["full_kv_num_blocks"], d["full_kv_indices"])
print(d["nonempty_num_blocks"], d["nonempty_indices"])'
