# every subcommand answers --help on stdout with exit 0
for c in gen compose measure patterns toeplitz positional; do
	"$MASKKIT" $c --help | head -1 || exit 1
done
"$MASKKIT" --help | head -1
