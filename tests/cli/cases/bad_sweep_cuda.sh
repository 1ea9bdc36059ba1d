. "$(dirname "$0")/../lib.sh"
cuda_case unbuilt s.csv "$MASKKIT" sweep --backend cuda --n 64 -o s.csv
