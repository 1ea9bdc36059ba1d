# a tiny vocab.txt: plain ids keep a line (empty) per blank line; --sentences
# and --json; --max-len cuts and keeps [SEP]
mkdir model
printf '[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\nworld\n,\n!\n.\nhow\nare\nyou\n?\n' >model/vocab.txt
printf 'Hello, world!\n\n  \nHow are you? Hello.\r\nhello hello hello hello\n' >t.txt
"$MASKKIT" tokenize model --text t.txt || exit 1
echo ---
"$MASKKIT" tokenize model/vocab.txt --text t.txt --sentences --max-len 4 || exit 1
echo ---
"$MASKKIT" tokenize model --text t.txt --sentences --json --max-len 5 -o out.json || exit 1
cat out.json
