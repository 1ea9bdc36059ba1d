. "$(dirname "$0")/../lib.sh"
# a model directory with neither tokenizer.json nor vocab.txt
mkdir model
printf 'hello\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.txt "$MASKKIT" tokenize model --text t.txt -o out.txt
