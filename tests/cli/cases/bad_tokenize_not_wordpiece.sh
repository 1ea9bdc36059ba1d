. "$(dirname "$0")/../lib.sh"
# a BPE tokenizer (GPT-2 style) is refused, not tokenised as if it were BERT's
mkdir model
printf '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}}\n' >model/tokenizer.json
printf 'hello\n' >t.txt
printf 'model\nt.txt\nkeep.list\n' >keep.list
bad_input out.txt "$MASKKIT" tokenize model --text t.txt -o out.txt
