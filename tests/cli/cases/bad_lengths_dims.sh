# A lengths array of 33 dimensions is named as such, not as "5 dimensions".
. "$(dirname "$0")/../lib.sh"; . "$(dirname "$0")/../npy.sh"
npy len.npy '<i8' "($(printf '1, %.0s' $(seq 33)))" 8
"$MASKKIT" measure 'local(w=1)' --n 8 --lengths len.npy
