"$MASKKIT" attn-stats any.h5 --mpi-io fast
