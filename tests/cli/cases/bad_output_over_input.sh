# Issue 27's data-loss cases: an output option naming one of the command's
# inputs (a mask file, an expression's file, a model's weights, config or a
# shard named without a .safetensors suffix, a text, a data file) is refused
# before anything runs: exit 2, one line, every input byte for byte intact.
# One check in the parser (cli_io.c) decides for every command.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../safetensors.sh"
. "$(dirname "$0")/../npy.sh"
st_model m
"$MASKKIT" gen local2 --n 16 -o mask.npy || exit 1
npy e.npy '<f4' '(8, 4)' 128
for t in q k v; do npy $t.npy '<f4' '(1, 1, 6, 4)' 96; done
"$MASKKIT" attn q.npy k.npy v.npy --weights-out maps.h5 -o o.npy >/dev/null || exit 1
printf 'one sentence. another one.\n' >t.txt
cp m/model.safetensors m/weights-1.st
printf '{"weight_map": {"embeddings.position_embeddings.weight": "weights-1.st"}}\n' \
	>m/model.safetensors.index.json
mkdir orig && cp -r m mask.npy e.npy maps.h5 t.txt q.npy orig/
same() {
	for f in m/model.safetensors m/config.json m/weights-1.st mask.npy e.npy maps.h5 t.txt q.npy; do
		cmp -s "$f" "orig/$f" || echo "CHANGED: $f"
	done
}
try() { "$@"; echo "exit $?"; same; }
try "$MASKKIT" measure mask.npy --png mask.npy
try "$MASKKIT" measure 'mask.npy + diag' --json --png ./mask.npy
try "$MASKKIT" toeplitz e.npy --png e.npy
try "$MASKKIT" toeplitz m --png m/model.safetensors
try "$MASKKIT" toeplitz m/model.safetensors --profile m/config.json
try "$MASKKIT" positional m --profile m/config.json
try "$MASKKIT" attn-stats maps.h5 --csv maps.h5
try "$MASKKIT" explain --text t.txt --csv t.txt m
try "$MASKKIT" encode m --text t.txt -o m/weights-1.st
try "$MASKKIT" sweep --patterns 'a=mask.npy,causal' --n 16 --csv mask.npy
try "$MASKKIT" attn q.npy k.npy v.npy --mask mask.npy -o mask.npy
# not an input: another dataset of an HDF5 input may be written
"$MASKKIT" attn q.npy k.npy v.npy -o maps.h5:/o >/dev/null; echo "exit $?"
