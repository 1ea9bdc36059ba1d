"$MASKKIT" measure local2 --n 64 --mpi-io collective
