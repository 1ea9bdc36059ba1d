# a dataset declaring 8 TiB that was never written (no storage allocated)
# would read as its fill value for hours: it is refused at once
cp "$(dirname "$0")/../../adversarial/corpus/declares_8tib_unwritten.h5" d.h5 || exit 1
timeout 60 "$MASKKIT" measure d.h5 --threshold 0.5
