# 1 of 64 chunks written: the other samples would read as the fill value
cp "$(dirname "$0")/../../adversarial/corpus/partly_written_chunks.h5" d.h5 || exit 1
"$MASKKIT" measure d.h5
