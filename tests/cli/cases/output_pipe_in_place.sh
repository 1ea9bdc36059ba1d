# docs/formats.md: an output that is a device or FIFO is written in place.
# /dev/stdout into a pipe ends at /proc/self/fd/1, a link whose target
# ("pipe:[N]") is no path; issue 27 found it refused ("cannot create a
# temporary file beside it"). Each writer here goes through the same
# atomic-write helper: masks, a plot and a named FIFO.
. "$(dirname "$0")/../lib.sh"
"$MASKKIT" gen causal --n 4 --format txt -o /dev/stdout | cat; echo "exit $?"
"$MASKKIT" gen causal --n 4 --format npy -o /dev/stdout | od -An -c | head -1
"$MASKKIT" gen causal --n 64 --format png -o /dev/stdout | od -An -c | head -1
. "$(dirname "$0")/../npy.sh"
npy e.npy '<f4' '(8, 4)' 128
"$MASKKIT" toeplitz e.npy --png /dev/stdout >/dev/null; echo "exit $?"
"$MASKKIT" toeplitz e.npy --png /dev/stdout 2>/dev/null | od -An -c | head -1
mkfifo fifo.txt || exit 1
cat fifo.txt > got.txt &
"$MASKKIT" gen local1 --n 3 --format txt -o fifo.txt; echo "exit $?"
wait
cat got.txt
test -p fifo.txt && echo "fifo still a fifo"
