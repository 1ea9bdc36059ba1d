# a 38 KB file whose one gzip chunk decompresses to 32 MiB: over --max-memory
cp "$(dirname "$0")/../../adversarial/corpus/one_32mib_gzip_chunk.h5" d.h5 || exit 1
timeout 60 "$MASKKIT" measure d.h5 --max-memory 16M
