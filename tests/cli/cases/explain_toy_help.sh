# --help among the toy options prints the whole 'maskkit explain --help' on
# stdout, exit 0: one table of both modes' options, the toys' marked, and
# the rule of which options go with which mode
"$MASKKIT" explain --toy collapse --steps 2 --help > toy || exit 1
head -1 toy | grep -q '^usage: maskkit explain' || { echo "no usage line"; exit 1; }
grep -e '--toy collapse \[' -e '--toy distance \[' -e '--score dot|dist ' \
	-e '^Which options go with which mode' toy
