# a 1.6 KB file declaring 2^30 samples: the per-sample lengths and results
# (8 GiB) are checked against --max-memory before anything is allocated
cp "$(dirname "$0")/../../adversarial/corpus/declares_2p30_samples.h5" d.h5 || exit 1
timeout 60 "$MASKKIT" axis d.h5 --max-memory 64M
