# --help among the toy options prints the whole 'maskkit explain --help'
# (the INPUT mode's part, then the toy part) on stdout, exit 0
"$MASKKIT" explain --toy collapse --steps 2 --help > toy || exit 1
head -1 toy | grep -q '^usage: maskkit explain' || { echo "no usage line"; exit 1; }
grep -e '--toy collapse \[' -e '--toy distance \[' -e '--score dot|dist ' toy
