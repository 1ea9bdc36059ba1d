# An input that attn maps (src/io/tensor_map.c) truncated by another program
# while the kernel runs raises SIGBUS where the data is touched: one line
# naming the file, exit 2, no output and no temporary file left.  8 heads of
# 8192 x 64 zeros take about a second; q.npy is cut once the temporary
# output exists (the inputs are mapped by then).
# The header padded to 64 bytes, as numpy writes it: data elsewhere is read,
# not mapped.
dict="{'descr': '<f4', 'fortran_order': False, 'shape': (8, 8192, 64), }"
pad=$(( (64 - (10 + ${#dict} + 1) % 64) % 64 ))
len=$(( ${#dict} + pad + 1 ))
for t in q k v; do
	{ printf '\223NUMPY\001\000'
	  printf "\\$(printf %03o $((len % 256)))\\$(printf %03o $((len / 256)))"
	  printf '%s%*s\n' "$dict" $pad ''
	  head -c 16777216 /dev/zero; } >$t.npy
done
"$MASKKIT" attn q.npy k.npy v.npy -o o.npy --backend cpu >out 2>err &
pid=$!
i=0
until ls o.npy.tmp.* >/dev/null 2>&1; do
	kill -0 $pid 2>/dev/null || { echo "attn ended before its output began"; exit 1; }
	i=$((i + 1))
	[ $i -le 3000 ] || { echo "no temporary output after 30 s"; kill $pid; exit 1; }
	sleep 0.01
done
truncate -s 1000 q.npy
wait $pid
echo "exit $?"
cat err
ls ./*.npy*
