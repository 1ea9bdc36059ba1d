# sinusoidal position embeddings (stored as float32) are Toeplitz: R^2 = 1;
# two files print a table; --json gives an array; the heatmap is a PNG of n x n
fix="$(dirname "$0")/../fixtures"
cp "$fix/model.h5" a.h5 && cp "$fix/model.h5" b.h5 || exit 1
"$MASKKIT" toeplitz a.h5 --first 4 > one || exit 1
grep -q '^n x d       16 x 8$' one || { echo "no shape line"; cat one; exit 1; }
grep -q '^R^2         1\.000000000 ' one || { echo "R^2 is not 1"; cat one; exit 1; }
grep -q '^first\.R^2   1\.000000000$' one || { echo "no leading block"; cat one; exit 1; }
"$MASKKIT" toeplitz a.h5 b.h5 > two || exit 1
[ "$(wc -l < two)" = 3 ] || { echo "expected a header and 2 rows"; cat two; exit 1; }
"$MASKKIT" toeplitz a.h5 b.h5 --json > j || exit 1
[ "$(grep -c '"file":' j)" = 2 ] && head -c 1 j | grep -q '\[' || { echo "bad JSON"; cat j; exit 1; }
"$MASKKIT" toeplitz a.h5 b.h5 --png 'p-{}.png' > /dev/null || exit 1
for f in p-a.png p-b.png; do
	# PNG signature, then IHDR width and height (big-endian): n = 16 drawn 32
	# pixels an entry (512), framed (docs/pictures.md): 707 x 590
	od -An -tx1 -N24 $f | tr -d ' \n' | grep -q '^89504e470d0a1a0a0000000d49484452000002c30000024e$' \
		|| { echo "$f is not a 707 x 590 PNG"; exit 1; }
done
echo ok
