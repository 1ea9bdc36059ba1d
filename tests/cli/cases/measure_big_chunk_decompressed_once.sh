# 8192 samples in one gzip chunk of 32 MiB: the chunk cache holds it, so it
# is decompressed once rather than once per sample (minutes)
cp "$(dirname "$0")/../../adversarial/corpus/one_32mib_gzip_chunk.h5" d.h5 || exit 1
timeout 60 "$MASKKIT" measure d.h5
