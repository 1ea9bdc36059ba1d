# the example scripts run as written against the built program
sh "$SRCDIR/examples/compose_and_export.sh" ex | grep -E '^cells that differ|^written'
N=32 sh "$SRCDIR/examples/sparsebert_compare.sh" sb >/dev/null && ls sb | wc -l
