# Sizes that used to hang (issue 27), ten times larger than where they were
# measured, each under a limit of 60 s that the old code could not keep and
# the new keeps in seconds (a hang check, not a benchmark:
# bench/tokenize_scaling.sh times them):
# - WordPiece on a 100,000-letter word with a 2,000-letter token in the
#   vocabulary and max_input_chars_per_word raised: every start looked up
#   each shorter candidate (117 s for 10,000 letters); now a trie walk;
# - --sentences on 300,000 one-sentence lines of one paragraph: each
#   sentence scanned the paragraph's lines from its first (42.6 s for
#   200,000); now a moving index.
py=${PYTHON:-/usr/bin/python3}
mkdir tok || exit 1
"$py" - <<'PY' || exit 1
import json
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "##b", "the", ".",
         "cat", "sat", "a" * 2000]
tok = {"version": "1.0", "added_tokens": [],
       "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                      "strip_accents": None, "lowercase": True},
       "pre_tokenizer": {"type": "BertPreTokenizer"},
       "post_processor": {"type": "TemplateProcessing",
                          "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                     {"Sequence": {"id": "A", "type_id": 0}},
                                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}]},
       "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                 "max_input_chars_per_word": 1000000,
                 "vocab": {t: i for i, t in enumerate(vocab)}}}
json.dump(tok, open("tok/tokenizer.json", "w"))
open("word.txt", "w").write("ab" * 50000 + "\n")
open("lines.txt", "w").write("The cat sat.\n" * 300000)
PY
timeout 60 "$MASKKIT" tokenize tok --text word.txt --max-len 200000 -o w.ids
echo "long word: exit $?"
# [CLS] a ##b ##a ##b ... [SEP]
"$py" -c 'import sys
ids = open("w.ids").read().split()
print("ids", len(ids), ids[:4], ids[-2:])'
timeout 60 "$MASKKIT" tokenize tok --text lines.txt --sentences -o s.ids
echo "sentences: exit $?"
sort s.ids | uniq -c | sed 's/^ *//'
