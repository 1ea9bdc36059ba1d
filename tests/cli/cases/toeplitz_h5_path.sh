# FILE.h5:/PATH names the dataset, as --dataset does (one of two that match)
cp "$(dirname "$0")/../fixtures/ambiguous.h5" . || exit 1
"$MASKKIT" toeplitz ambiguous.h5:/a/position_embeddings/w:0 > one || exit 1
"$MASKKIT" toeplitz ambiguous.h5 --dataset /a/position_embeddings/w:0 > two || exit 1
[ "$(sed 1d one)" = "$(sed 1d two)" ] || { echo "FILE.h5:/PATH and --dataset differ"; diff one two; exit 1; }
sed -n 1,2p one
