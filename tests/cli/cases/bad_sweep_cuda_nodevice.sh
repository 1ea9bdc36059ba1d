# Built with CUDA on a machine without a usable GPU: one line, exit 2.
. "$(dirname "$0")/../lib.sh"
cuda_case nodevice s.csv "$MASKKIT" sweep --backend cuda --dtype bf16 --n 64 -o s.csv
