. "$(dirname "$0")/../lib.sh"
mkdir model
printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\n,\n!\n.\nhow\nare\nyou\n?\n' >model/vocab.txt
# blank lines only: nothing to tokenise
printf '\n  \n\t\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.txt "$MASKKIT" tokenize model --text t.txt -o out.txt
