# a dataset named twice (FILE.h5:/PATH and --dataset) is refused, not chosen
cp "$(dirname "$0")/../fixtures/ambiguous.h5" . || exit 1
"$MASKKIT" toeplitz ambiguous.h5:/a/position_embeddings/w:0 --dataset /b/position_embeddings/w:0
