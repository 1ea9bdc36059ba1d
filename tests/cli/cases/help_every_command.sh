# every subcommand listed by 'maskkit --help' answers --help on stdout with
# exit 0 (the list comes from the program, so a new command is never missed)
cmds=$("$MASKKIT" --help | sed -n '/^commands:/,/^$/p' | awk 'NF > 1 { print $1 }')
[ -n "$cmds" ] || exit 1
for c in $cmds; do
	"$MASKKIT" "$c" --help | head -1 || exit 1
done
"$MASKKIT" --help | head -1
