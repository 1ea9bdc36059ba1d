#!/usr/bin/env python3
"""maskkit tokenize against an independent Python WordPiece (wordpiece_ref.py)
on a real model's tokenizer (all-MiniLM-L6-v2, BERT uncased):

1. 50 hand-picked lines (accents, punctuation, numbers, unknown and long
   words, CJK, emoji, mixed scripts, control characters, tabs, special
   tokens written in the text): the ids and tokens must be identical, with
   the model's tokenizer.json and with a vocab.txt made from it;
2. the same lines cut at --max-len 12: ids and "truncated";
3. the GPL-3 text with --sentences: the sentences maskkit prints must be the
   ones this file's own implementation of the documented rule finds, and
   each one's ids must equal the reference's.

The model is $MASKKIT_MODEL, else ${XDG_CACHE_HOME:-~/.cache}/maskkit/
all-MiniLM-L6-v2; without it the test is skipped (77), or fails when
MASKKIT_REQUIRE_ALL is set.
"""
# needs: stdlib
import json
import os
import subprocess
import sys
import tempfile
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from wordpiece_ref import Tokenizer  # noqa: E402

MASKKIT = os.environ["MASKKIT"]
GPL = "/usr/share/common-licenses/GPL-3"

LINES = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "Café, naïve, résumé, façade, jalapeño, Zoë and Ångström.",
    "Crème brûlée costs €4.50 (about $5).",
    "It's 3:45 p.m. on 2024-01-31; temperature -3.5°C.",
    "e-mail me at john.doe@example.com or visit https://example.org/a?b=c&d=e#f",
    "Numbers: 1,234,567.89 and 3.14159 and 1e-10 and 0x1F.",
    "Unbelievably, the antidisestablishmentarianism debate continues.",
    "Pneumonoultramicroscopicsilicovolcanoconiosis is a long word.",
    "supercalifragilisticexpialidocious" * 3 + " is longer than 100 characters",
    "a" * 100 + " " + "b" * 101,
    "中文分词测试：我爱北京天安门。",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 문장도 토큰화합니다.",
    "Ελληνικά: ΟΔΟΣ, Σίσυφος, ΣΟΦΟΣ.",
    "Русский текст с ЁЛКОЙ и ёжиком.",
    "العربية: مرحبا بالعالم!",
    "עברית: שלום עולם",
    "हिन्दी में नमस्ते दुनिया।",
    "ไทย ภาษาไทย ไม่มีช่องว่าง",
    "Emoji: 😀 🎉 👍🏽 ❤️ 🇫🇷 and 🥰.",
    "Mixed: English中文Ελληνικά русский 日本語 mixed123abc.",
    "Tabs\tand\tmore\t\ttabs, and   multiple   spaces.",
    "Control\x01chars\x07here\x1f and\x7f DEL, \x0bvertical\x0cform, carriage\rreturn.",
    "Zero\u200bwidth\u200cjoiner\u200dand\ufeffBOM and soft\u00adhyphen.",
    "Non-breaking\u00a0space, en\u2002space, ideographic\u3000space, thin\u2009space.",
    "Line\u2028separator and paragraph\u2029separator and NEL\u0085here.",
    "Replacement \ufffd char, private use \ue000 and unassigned \U000e0080 here.",
    "Quotes: “curly” ‘single’ «guillemets» „low” and ‹single›.",
    "Dashes – en — em ‒ figure and ellipsis… and bullets • ·.",
    "Special tokens [MASK] and [SEP] inside, [CLS][UNK] adjacent, [mask] lower.",
    "Brackets {curly} [square] <angle> (round) |pipes| ~tilde~ `backtick` ^caret^.",
    "Math: x² + y³ = z½, √2 ≈ 1.414, ∑ ∫ ∞ ≠ ≤ ≥ ±.",
    "Fullwidth ＡＢＣ ａｂｃ １２３ and halfwidth ｶﾀｶﾅ.",
    "Ligatures: ﬁne ﬂow Œuvre æsthetic straße ß ẞ.",
    "Turkish: İstanbul, IŞIK, ılık, Çağrı, İİİ.",
    "Vietnamese: Tiếng Việt có dấu: Hà Nội, Đà Nẵng.",
    "Combining: e\u0301 a\u0308 o\u0302\u0323 n\u0303 and stacked a\u0301\u0302\u0303.",
    "Polish: Zażółć gęślą jaźń; Czech: Příliš žluťoučký kůň.",
    "UPPERCASE SHOUTING WITH ACCENTS ÉÀÙ AND ÑANDÚ.",
    "Contractions: don't, won't, I'm, y'all, o'clock, rock'n'roll.",
    "Hashtags #NLP and @mentions, 100% sure & more*stars* and under_scores.",
    "Roman numerals Ⅻ and circled ① ② and superscript ⁿ.",
    "Currency: £10, ¥2000, ₹500, ₩1000, ₿0.5, ¢99.",
    "CJK extension: 𠀀𠀁 and compatibility 豈 and radicals ⺀ ⼀.",
    "Mongolian ᠮᠣᠩᠭᠣᠯ and Tibetan བོད་ཡིག and Ethiopic ሰላም.",
    "Repeated punctuation!!! ??? ... --- *** ,,,",
    "Numbers with units: 5km, 10kg, 3.5GHz, 64GiB, 1080p, 4K.",
    "Cherokee ᏣᎳᎩ and Armenian Հայերեն and Georgian ქართული.",
    "   leading and trailing spaces   ",
]


def model_dir():
    d = os.environ.get("MASKKIT_MODEL")
    if not d:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(cache, "maskkit", "all-MiniLM-L6-v2")
    if not os.path.isfile(os.path.join(d, "tokenizer.json")):
        required = os.environ.get("MASKKIT_REQUIRE_ALL")
        print(f"{'FAIL' if required else 'SKIP'}: no model tokenizer at {d} (set MASKKIT_MODEL, "
              "or fetch all-MiniLM-L6-v2)")
        sys.exit(1 if required else 77)
    return d


def tokenize(model, path, *args):
    r = subprocess.run([MASKKIT, "tokenize", model, "--text", path, "--json", *args],
                       capture_output=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: maskkit tokenize {model} --text {path} {' '.join(args)} exited "
                 f"{r.returncode}: {r.stderr.decode(errors='replace').strip()}")
    return json.loads(r.stdout.decode("utf-8"))


def compare_lines(ref, model, path, what, max_len=512):
    got = tokenize(model, path, "--max-len", str(max_len))
    checks.check(len(got) == len(LINES), f"{what}: {len(got)} objects for {len(LINES)} lines")
    for k, (line, obj) in enumerate(zip(LINES, got)):
        ids, truncated = ref.encode(line, max_len)
        text_ok = obj["line"] == line.rstrip("\r")
        checks.check(text_ok and obj["lineno"] == k + 1,
                     f"{what}: line {k + 1} came back as {obj['line']!r}, line {obj['lineno']}")
        checks.check(obj["ids"] == ids,
                     f"{what}: line {k + 1} {line!r}:\n  maskkit {obj['tokens']}\n"
                     f"  python  {ref.tokens(ids)}")
        checks.check(obj["tokens"] == ref.tokens(ids), f"{what}: line {k + 1}: tokens differ")
        checks.check(obj["truncated"] == truncated, f"{what}: line {k + 1}: truncated differs")


# ---- the sentence rule of model.h, written again --------------------------------------

CLOSERS = "\"')]\u2019\u201d\u00bb"
OPENERS = "\"'(\u201c\u2018\u00ab"


def opener(ch):
    return unicodedata.category(ch) in ("Lu", "Lt", "Nd") or ch in OPENERS


def split_paragraph(p):
    out, off = [], 0
    while off < len(p):
        s, cut = p[off:], None
        for k, ch in enumerate(s):
            if ch not in ".?!":
                continue
            e = k + 1
            while e < len(s) and s[e] in CLOSERS:
                e += 1
            w = e
            while w < len(s) and s[w] in " \t":
                w += 1
            if e < w < len(s) and opener(s[w]):
                cut = (e, w)
                break
        if cut is None:
            out.append(s)
            break
        out.append(s[:cut[0]])
        off += cut[1]
    return out


def sentences(text):
    out, para = [], []
    for line in text.split("\n") + [""]:
        line = line[:-1] if line.endswith("\r") else line
        if line.strip(" \t"):
            para.append(line.strip(" \t"))
        elif para:
            out.extend(split_paragraph(" ".join(para)))
            para = []
    return out


def compare_gpl(ref, model):
    if not os.path.isfile(GPL):
        print(f"note: {GPL} is missing: the long-text comparison is skipped")
        return
    with open(GPL, encoding="utf-8") as f:
        want = sentences(f.read())
    got = tokenize(model, GPL, "--sentences")
    checks.check([o["line"] for o in got] == want,
                 f"GPL-3: maskkit's {len(got)} sentences are not the rule's {len(want)}")
    bad = 0
    for obj in got:
        ids, truncated = ref.encode(obj["line"])
        if obj["ids"] != ids or obj["truncated"] != truncated:
            bad += 1
            if bad <= 5:
                print(f"  sentence at line {obj['lineno']}: {obj['line'][:80]!r}")
    checks.check(bad == 0, f"GPL-3: {bad} of {len(got)} sentences tokenised differently")
    print(f"GPL-3: {len(got)} sentences, {sum(len(o['ids']) for o in got)} ids compared")


def vocab_txt_dir(model, tmp):
    """A vocab.txt and tokenizer_config.json made from the model's tokenizer.json."""
    with open(os.path.join(model, "tokenizer.json"), encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    d = os.path.join(tmp, "vocab_model")
    os.mkdir(d)
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        for tok, _ in sorted(vocab.items(), key=lambda x: x[1]):
            f.write(tok + "\n")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True}, f)
    return d


def main():
    model = model_dir()
    ref = Tokenizer.from_dir(model)
    checks.check(len(LINES) == 50, f"{len(LINES)} hand-picked lines, not 50")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "lines.txt")
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write("\n".join(LINES) + "\n")
        compare_lines(ref, model, path, "tokenizer.json")
        compare_lines(ref, model, path, "tokenizer.json --max-len 12", max_len=12)
        compare_lines(ref, vocab_txt_dir(model, tmp), path, "vocab.txt")
    compare_gpl(ref, model)
    return checks.summary("test_tokenize")


if __name__ == "__main__":
    sys.exit(main())
