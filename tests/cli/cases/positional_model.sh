# the positional term of a small two-layer model: one row per head, a TISA
# fit with the parameter count 3 S H L, and a heatmap grid of the heads
fix="$(dirname "$0")/../fixtures"
cp "$fix/model.h5" m.h5 || exit 1
"$MASKKIT" positional m.h5 --heads 2 --layer 1 --fit 2 --png heads.png --columns 2 > out || exit 1
grep -q '^parameters  *3 S H L = 3 x 2 x 2 x 2 = 24 ' out || { cat out; exit 1; }
[ "$(grep -c '^     [01]  ' out)" = 2 ] || { echo "expected 2 head rows"; cat out; exit 1; }
grep -q 'layer_._1/attention/self/query/kernel:0' out || { echo "wrong layer"; exit 1; }
# 2 framed panels of 16 entries, 32 pixels each, side by side, with a title
# and labels (docs/pictures.md): 1414 x 606
od -An -tx1 -N24 heads.png | tr -d ' \n' | grep -q '^89504e470d0a1a0a0000000d49484452000005860000025e$' \
	|| { echo "heads.png is not a 1414 x 606 PNG"; od -An -tx1 -N24 heads.png; exit 1; }
echo ok
