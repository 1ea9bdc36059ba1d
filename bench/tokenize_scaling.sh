#!/bin/sh
# maskkit tokenize on the sizes issue 27 found slow, timed against its own
# peer in the same run: 200,000 one-sentence lines with --sentences against
# the same lines without it (the goal: at most 2x), and one word of L letters
# (L = 10,000 and 100,000) with a 2,000-letter token in the vocabulary.
# Runs alternate (plain, sentences, plain, ...), R of each (default 5); the
# medians and their ratio are printed.
#   MASKKIT=build/maskkit sh bench/tokenize_scaling.sh [R]
set -eu
maskkit=${MASKKIT:-build/maskkit}
py=${PYTHON:-/usr/bin/python3}
reps=${1:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tok"
"$py" - "$tmp" <<'PY'
import json, random, sys
d = sys.argv[1]
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "##b", "."] + \
        "the quick brown fox jumps over lazy dog and runs away".split() + ["a" * 2000]
tok = {"version": "1.0", "added_tokens": [],
       "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                      "strip_accents": None, "lowercase": True},
       "pre_tokenizer": {"type": "BertPreTokenizer"},
       "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                 "max_input_chars_per_word": 1000000,
                 "vocab": {t: i for i, t in enumerate(vocab)}}}
json.dump(tok, open(d + "/tok/tokenizer.json", "w"))
random.seed(1)
words = vocab[10:-1]
with open(d + "/lines.txt", "w") as f:
    for _ in range(200000):
        f.write(" ".join(random.choice(words) for _ in range(6)).capitalize() + ".\n")
for n in (10000, 100000):
    open(f"{d}/word{n}.txt", "w").write("ab" * (n // 2) + "\n")
PY
now() { date +%s.%N; }
run() { # run FILE [OPTION]: seconds of one tokenize
	t0=$(now)
	"$maskkit" tokenize "$tmp/tok" --text "$1" --max-len 200000 ${2:-} -o "$tmp/out" >/dev/null
	echo "$(now) - $t0" | bc
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
: >"$tmp/plain"; : >"$tmp/sent"
for _ in $(seq "$reps"); do
	run "$tmp/lines.txt" >>"$tmp/plain"
	run "$tmp/lines.txt" --sentences >>"$tmp/sent"
done
p=$(median <"$tmp/plain"); s=$(median <"$tmp/sent")
echo "200,000 lines: plain $p s, --sentences $s s (medians of $reps alternating): ratio $(echo "scale=2; $s / $p" | bc)"
for n in 10000 100000; do
	: >"$tmp/w"
	for _ in $(seq "$reps"); do run "$tmp/word$n.txt" >>"$tmp/w"; done
	echo "one word of $n letters: $(median <"$tmp/w") s (median of $reps)"
done
